import { createServer } from 'node:net';

/**
 * A port free right now on 127.0.0.1, for a test that must name a URL in one
 * process's settings before the process serving it starts (settings are
 * fixed once a process is built).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
