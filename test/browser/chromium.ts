import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium: the tests never download a browser of their own. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Why the browser suites cannot run here, or false when they can. In CI a
 * missing browser is a failure (thrown), elsewhere a skip with the reason.
 */
export function chromiumMissing(): string | false {
  if (existsSync(CHROMIUM)) return false;
  const why = `${CHROMIUM} is missing (apt-get install -y chromium)`;
  if (process.env.CI === 'true') throw new Error(`Chromium is required in CI: ${why}`);
  return why;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // No sandbox as root in a container; nothing here may reach the network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A client's redirect URI on loopback that records every query it receives. */
export interface Callback {
  /** http://127.0.0.1:<port>/callback, as registered for the client. */
  url: string;
  received: URLSearchParams[];
  close(): Promise<void>;
}

export async function startCallback(): Promise<Callback> {
  const received: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (u.pathname === '/callback') received.push(u.searchParams);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Callback</title><h1>Back at the app</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    received,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
