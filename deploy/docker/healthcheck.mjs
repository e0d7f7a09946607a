// The image's HEALTHCHECK: asks /health of the server in this container (200 once it serves and
// its database answers). The address and port come from where the server takes them: FB_*
// variables over /config/settings.json, as in the entrypoint. /health answers with or without
// the base URL, so that is not needed.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

let file = {};
try {
  file = JSON.parse(fs.readFileSync('/config/settings.json', 'utf8'));
} catch {
  // No settings file (or YAML): the variables and the defaults below.
}
const env = process.env;
const port = env.FB_PORT ?? file.port ?? 80;
const address = env.FB_ADDRESS ?? file.address ?? '';
const host = address === '' || address === '0.0.0.0' ? '127.0.0.1' : address === '::' ? '::1' : address;
const tls = Boolean(env.FB_CERT ?? file.cert);

const request = (tls ? https : http).get(
  // The certificate names the public host, not this loopback address: only liveness is asked.
  { host, port, path: '/health', timeout: 5000, rejectUnauthorized: false },
  (res) => {
    res.resume();
    process.exit(res.statusCode === 200 ? 0 : 1);
  },
);
request.on('timeout', () => request.destroy(new Error('timed out')));
request.on('error', (err) => {
  console.error(`health check: ${err.message}`);
  process.exit(1);
});
