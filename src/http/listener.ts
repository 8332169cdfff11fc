import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions } from 'node:https';
import type { FastifyBaseLogger, FastifyServerFactory } from 'fastify';
import { listenOn } from '../infra/listen.js';

/**
 * A listening socket bound before the services are built, so that a port 0
 * is a known port (and the public URLs final) by the time anything reads
 * them. The Fastify app takes the server over through `serverFactory`;
 * until then requests are answered 503.
 */
export interface Listener {
  readonly port: number;
  /** As fastify's listen line: `http://127.0.0.1:8080`. */
  readonly address: string;
  /** For Fastify's options: the app's handler, which gets requests once `announce` is called. */
  readonly serverFactory: FastifyServerFactory;
  /**
   * After the app is ready: requests go to it from now on, and the line
   * fastify's `listen` would log is logged (operators and tests look for it).
   * Not before: Fastify's handler exists from construction, but a request
   * reaching it before `ready()` finds no hooks (a worker started again under
   * load gets connections from the moment it listens).
   */
  announce(log: FastifyBaseLogger): void;
  /** Stops accepting and waits for open connections to end (after the app closed). */
  close(): Promise<void>;
}

/**
 * Until the app is attached (start-up, which waits for an unreachable
 * database: src/store/startup.ts): not yet, try again in a second. Except
 * liveness: the process is alive, so GET /healthz answers 200 as the README
 * promises (a liveness probe must not restart a process that waits for its
 * database); /readyz says `starting` with 503.
 */
function starting(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '').split('?', 1)[0];
  if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ status: 'ok' }));
    return;
  }
  res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1', connection: 'close' });
  res.end(JSON.stringify(path === '/readyz' ? { status: 'starting' } : { error: 'temporarily_unavailable', error_description: 'starting' }));
}

/** Binds `host:port` (HTTPS with `tls`); port 0 picks a free one. */
export async function bindListener(host: string, port: number, tls?: ServerOptions): Promise<Listener> {
  const server: Server = tls ? createHttpsServer(tls) : createServer();
  // Fastify's defaults for the servers it makes itself.
  server.keepAliveTimeout = 72_000;
  server.requestTimeout = 0;
  server.setTimeout(0);
  server.on('request', starting);
  const { port: boundPort, address } = await listenOn(server, host, port, tls ? 'https' : 'http');
  let app: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  return {
    port: boundPort,
    address,
    serverFactory: (handler) => {
      app = handler;
      return server;
    },
    announce: (log) => {
      if (app) {
        server.off('request', starting);
        server.on('request', app);
        app = undefined;
      }
      log.info(`Server listening at ${address}`);
    },
    close: () => new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      // Keep-alive connections with no request in flight would hold close() open.
      server.closeIdleConnections();
    }),
  };
}
