// How a measurement can end without a number: our endpoint is not there yet, or the
// reference tool is not installed.

/** Our side cannot be measured: the endpoint answers 404/405/501 (or the SPA page). */
export class Unavailable extends Error {
  /** @param {string} reason e.g. "404" */
  constructor(reason) {
    super(`unavailable (${reason})`);
    this.name = 'Unavailable';
  }
}

/** The reference cannot be measured: the tool is missing. */
export class Skipped extends Error {
  /** @param {string} reason e.g. "nginx not installed" */
  constructor(reason) {
    super(`skipped (${reason})`);
    this.name = 'Skipped';
  }
}

const MISSING = new Set([404, 405, 501]);

/**
 * Validates the first answer of an endpoint. 404/405/501 mean "not implemented (yet)"; an
 * HTML answer to an API GET is the SPA fallback the contract uses for unknown /api routes.
 * Any other non-expected status is a real error.
 * @param {{ status: number, headers: import('node:http').IncomingHttpHeaders }} reply
 * @param {string} what e.g. "GET /api/raw/big.bin"
 * @param {number[]} [expected]
 */
export function checkEndpoint(reply, what, expected = [200]) {
  if (MISSING.has(reply.status)) throw new Unavailable(String(reply.status));
  const type = String(reply.headers['content-type'] ?? '');
  if (reply.status === 200 && type.startsWith('text/html')) throw new Unavailable('200 SPA page');
  if (!expected.includes(reply.status)) throw new Error(`${what} answered ${reply.status}`);
}
