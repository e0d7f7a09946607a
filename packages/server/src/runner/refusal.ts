/** The old server's answer to anything it would not run; clients and scripts know this text. */
export const NOT_ALLOWED = 'Command not allowed.';

/** A command the runner will not start. The message is meant for the user who typed it. */
export class CommandRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandRefused';
  }
}
