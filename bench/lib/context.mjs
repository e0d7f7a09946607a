// What every row receives (types only).

/**
 * @typedef {object} Context
 * @property {import('./options.mjs').Options} opts
 * @property {import('./dataset.mjs').Dataset} data
 * @property {string} workDir scratch folder of this run (outside the served root)
 * @property {() => Promise<import('./server.mjs').Server>} server started on first use
 * @property {() => Promise<import('./nginx.mjs').Nginx | null>} nginx started on first use; null when not installed
 * @property {() => Promise<import('./apache.mjs').Apache | null>} apache httpd with mod_dav, started on first use; null when not installed
 * @property {(msg: string) => void} log progress on stderr
 */

/**
 * @typedef {object} Row
 * @property {string[]} ids the row ids it can produce (a row runs when one of them is selected)
 * @property {(ctx: Context) => Promise<import('./report.mjs').RowResult[]>} run
 */

export {};
