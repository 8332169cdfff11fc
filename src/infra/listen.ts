import type { AddressInfo, Server } from 'node:net';

/**
 * Listens on `host:port` (0 picks a free port) and answers the bound port and
 * the URL a person would type for it (`http://127.0.0.1:8080`: a wildcard
 * bind is shown as loopback, IPv6 in brackets). A busy port rejects with
 * Node's EADDRINUSE error, which the command line turns into one line.
 */
export async function listenOn(server: Server, host: string, port: number, scheme: 'http' | 'https'): Promise<{ port: number; address: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const shown = bound.family === 'IPv6' ? `[${bound.address === '::' ? '::1' : bound.address}]` : bound.address === '0.0.0.0' ? '127.0.0.1' : bound.address;
  return { port: bound.port, address: `${scheme}://${shown}:${bound.port}` };
}
