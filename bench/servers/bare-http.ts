import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exitWithParent } from './lifecycle.js';

/** The ceiling: Node's http module answering a small JSON, nothing else. */
const body = JSON.stringify({ hello: 'world' });
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
exitWithParent();
