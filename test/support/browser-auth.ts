import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { projectRoot } from '../../db/client';

/** Debian's chromium (scripts/bootstrap.sh installs it when run as root). */
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumInstalled = fs.existsSync(CHROMIUM);

/**
 * `describe` for a suite that needs Chromium. Without it the suite is skipped, with a warning, on a
 * developer's machine, but fails in CI (CI=true), where scripts/bootstrap.sh installs it: a browser
 * gone missing must not pass as green.
 */
export function describeInChromium(name: string, suite: () => void): void {
  const missing = `${CHROMIUM} is missing; scripts/bootstrap.sh installs Debian's chromium when run as root`;
  if (chromiumInstalled) describe(name, suite);
  else if (process.env.CI === 'true') {
    describe(name, () => {
      it('runs in Chromium', () => {
        throw new Error(missing);
      });
    });
  } else {
    console.warn(`${name}: SKIPPED, ${missing}`);
    describe.skip(name, suite);
  }
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

export const BROWSER_AUTH_DIST = path.join(projectRoot(), 'sdk', 'browser-auth', 'dist');
const JOSE_BROWSER_BUILD = path.join(projectRoot(), 'node_modules', 'jose', 'dist', 'webapi');

/** The import map a page needs to load the built ES module without a bundler. */
export const IMPORT_MAP = '<script type="importmap">{"imports":{"jose":"/vendor/jose/index.js"}}</script>';

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.map': 'application/json', '.html': 'text/html; charset=utf-8' };

function serveFile(res: http.ServerResponse, root: string, relative: string): void {
  const file = path.resolve(root, `.${relative}`);
  if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(fs.readFileSync(file));
}

export interface Listening {
  url: string;
  close(): Promise<void>;
}

export async function listen(handler: http.RequestListener): Promise<Listening> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * An app's origin on loopback: the built SDK under /sdk/, jose's browser build under /vendor/jose/,
 * and `page()`'s HTML for every other path (the redirect URI included, whatever its query).
 */
export function startAppOrigin(page: () => string): Promise<Listening> {
  return listen((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://app');
    if (pathname.startsWith('/sdk/')) return serveFile(res, BROWSER_AUTH_DIST, pathname.slice('/sdk'.length));
    if (pathname.startsWith('/vendor/jose/')) return serveFile(res, JOSE_BROWSER_BUILD, pathname.slice('/vendor/jose'.length));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page());
  });
}
