import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a shared service (PostgreSQL, Redis) that a test
 * controls: `cut()` breaks every open connection, `refuse()` also stops
 * accepting new ones (connection refused), `restore()` accepts again. The
 * shared services themselves are never stopped or restarted.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private stalled = false;
  port = 0;

  private constructor(private readonly target: { host: string; port: number }) {}

  static async start(targetUrl: string): Promise<TcpProxy> {
    const u = new URL(targetUrl);
    const proxy = new TcpProxy({ host: u.hostname, port: Number(u.port) || (u.protocol.startsWith('redis') ? 6379 : 5432) });
    await proxy.listen();
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Connections open through the proxy right now (client side). */
  get connections(): number {
    return this.sockets.size / 2;
  }

  private listen(): Promise<void> {
    const server = createServer((client) => {
      if (this.stalled) {
        // Accepted, never answered: a server that hangs, or packets dropped on the way.
        this.sockets.add(client);
        client.on('error', () => undefined);
        client.on('close', () => this.sockets.delete(client));
        return;
      }
      const upstream = connect(this.target.port, this.target.host);
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        this.sockets.add(a);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          this.sockets.delete(a);
          b.destroy();
        });
        a.pipe(b);
      }
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      // The same port again after refuse(): clients keep the address they were given.
      server.listen(this.port, '127.0.0.1', () => {
        this.port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  }

  /** Breaks every open connection (both sides see the socket close); new ones are still accepted. */
  cut(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /** Breaks every open connection; new ones are accepted but get no answer until restore(). */
  stall(): void {
    this.stalled = true;
    this.cut();
  }

  /** Breaks every open connection and refuses new ones until restore(). */
  async refuse(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.cut();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Accepts connections again, on the same port. */
  async restore(): Promise<void> {
    if (this.stalled) {
      this.stalled = false;
      this.cut();
    }
    if (this.server) return;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.listen();
      } catch (e) {
        if (attempt >= 20) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async close(): Promise<void> {
    await this.refuse();
  }
}
