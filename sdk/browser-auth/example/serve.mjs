#!/usr/bin/env node
// Serves the sample app on its own loopback origin: this directory, the built SDK under /sdk/,
// jose's browser build under /vendor/jose/ and /config.js from the environment.
//   WFE_CLIENT_KEY=ck_... node sdk/browser-auth/example/serve.mjs
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const roots = {
  '/sdk/': path.join(here, '..', 'dist'),
  '/vendor/jose/': path.dirname(fileURLToPath(import.meta.resolve('jose'))),
  '/': here,
};
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.map': 'application/json' };

const env = process.env;
if (!env.WFE_CLIENT_KEY) {
  console.error('serve.mjs: set WFE_CLIENT_KEY to the client_key of an app provisioned with identity.app.provision');
  process.exit(2);
}
const config = {
  clientKey: env.WFE_CLIENT_KEY,
  loginUrl: env.WFE_LOGIN_URL ?? 'http://127.0.0.1:3001',
  identityApi: env.WFE_API_URL ?? 'http://127.0.0.1:3000',
  workflowType: env.WFE_WORKFLOW_TYPE ?? '',
  workflowInput: JSON.parse(env.WFE_WORKFLOW_INPUT ?? '{}'),
  renewSkewSeconds: Number(env.WFE_RENEW_SKEW_SECONDS ?? 60),
};

const server = http.createServer((req, res) => {
  const { pathname } = new URL(req.url ?? '/', 'http://example');
  if (pathname === '/config.js') {
    res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' });
    return res.end(`export default ${JSON.stringify(config)};\n`);
  }
  const prefix = Object.keys(roots).find((p) => pathname.startsWith(p));
  const root = roots[prefix];
  const relative = pathname === '/' ? 'index.html' : pathname.slice(prefix.length);
  const file = path.resolve(root, relative);
  if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile() || file.endsWith('serve.mjs')) {
    res.writeHead(404).end('not found');
    return;
  }
  res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
  fs.createReadStream(file).pipe(res);
});

const port = Number(env.EXAMPLE_PORT ?? 5173);
server.listen(port, env.EXAMPLE_HOST ?? '127.0.0.1', () => {
  const { port: actual } = server.address();
  // The test reads this line to learn the port when EXAMPLE_PORT=0.
  console.log(`example app: http://127.0.0.1:${actual}/ (register http://127.0.0.1:${actual}/ as a redirect URI)`);
});
