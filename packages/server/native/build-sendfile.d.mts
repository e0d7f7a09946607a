/** Builds the sendfile addon at `outFile`; returns why not when it cannot. */
export function buildSendfile(outFile: string): string | undefined;
