import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { OutboundError } from '../../src/core/outbound.js';
import { createOutbound } from '../../src/infra/outbound/client.js';
import { certDir } from '../mtls/support.js';

/**
 * A raw TCP server that answers each request (read up to the end of its
 * head and content-length body) with the bytes `answer` gives, written in
 * the pieces it lists: the client must read responses however they are cut.
 */
async function rawServer(answer: (path: string, n: number) => { pieces: (string | Buffer)[]; close?: boolean }): Promise<{ url: string; server: Server; connections: number; requests: string[] }> {
  const state = { url: '', server: undefined as unknown as Server, connections: 0, requests: [] as string[] };
  const sockets = new Set<Socket>();
  state.server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buf = Buffer.alloc(0);
    socket.on('data', async (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const raw = buf.toString('latin1', 0, end + 4 + length);
        buf = buf.subarray(end + 4 + length);
        state.requests.push(raw);
        const { pieces, close } = answer(head.split(' ')[1]!, state.requests.length);
        for (const p of pieces) {
          socket.write(p);
          await new Promise((r) => setTimeout(r, 5));
        }
        if (close) socket.end();
      }
    });
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  const close = state.server.close.bind(state.server);
  state.server.close = ((cb?: (err?: Error) => void) => {
    for (const s of sockets) s.destroy();
    return close(cb);
  }) as Server['close'];
  return state;
}

describe('the outbound client on the wire (src/infra/outbound/client.ts, undici)', () => {
  let target: Awaited<ReturnType<typeof rawServer>>;
  const client = createOutbound({ allowPrivate: true });
  before(async () => {
    target = await rawServer((path) => {
      switch (path) {
        case '/chunked':
          return { pieces: ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/plain\r\n\r\n5\r\nhel', 'lo\r\n6;ext=1\r\n world\r\n0\r\nx-trailer: 1\r\n\r\n'] };
        case '/close':
          return { pieces: ['HTTP/1.1 200 OK\r\n', 'content-type: text/plain\r\n\r\nuntil ', 'the end'], close: true };
        case '/continue':
          // 103, not 100: undici refuses an unsolicited 100 Continue (it never sends Expect: 100-continue, so none is due).
          return { pieces: ['HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\n', 'HTTP/1.1 201 Created\r\ncontent-length: 2\r\nretry-after: 7\r\nretry-after: 9\r\nset-cookie: a=1\r\nset-cookie: b=2\r\nx-list: a\r\nx-list: b\r\n\r\nok'] };
        case '/no-keep-alive':
          return { pieces: ['HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 3\r\n\r\nbye'] };
        case '/empty':
          return { pieces: ['HTTP/1.1 204 No Content\r\n\r\n'] };
        case '/malformed':
          return { pieces: ['SMTP ready\r\n\r\n'] };
        default:
          return { pieces: [`HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength('é ok')}\r\n\r\n`, 'é ok'] };
      }
    });
  });
  after(() => {
    client.close();
    target.server.close();
  });

  it('reads bodies framed by content-length, chunked coding and the end of the connection, however the bytes are cut', async () => {
    const plain = await client.request({ url: `${target.url}/plain`, timeoutMs: 2000 });
    assert.equal(plain.status, 200);
    assert.equal(plain.body, 'é ok');
    const chunked = await client.request({ url: `${target.url}/chunked`, timeoutMs: 2000 });
    assert.deepEqual([chunked.status, chunked.body, chunked.headers['content-type']], [200, 'hello world', 'text/plain']);
    const closed = await client.request({ url: `${target.url}/close`, timeoutMs: 2000 });
    assert.deepEqual([closed.status, closed.body], [200, 'until the end']);
    const empty = await client.request({ url: `${target.url}/empty`, method: 'POST', body: '{}', timeoutMs: 2000 });
    assert.deepEqual([empty.status, empty.body], [204, '']);
  });

  it('skips an interim 1xx answer, and reads repeated headers as node:http does', async () => {
    const r = await client.request({ url: `${target.url}/continue`, method: 'POST', body: 'x', timeoutMs: 2000 });
    assert.equal(r.status, 201);
    assert.equal(r.body, 'ok');
    assert.equal(r.headers['retry-after'], '7');
    assert.deepEqual(r.headers['set-cookie'], ['a=1', 'b=2']);
    assert.equal(r.headers['x-list'], 'a, b');
  });

  it('sends head and body with host and content-length, and keeps the connection for the next request', async () => {
    const before = target.connections;
    const at = target.requests.length;
    for (let i = 0; i < 5; i++) {
      const r = await client.request({ url: `${target.url}/hook?n=${i}`, method: 'POST', headers: { 'content-type': 'application/json', 'webhook-id': `msg_${i}` }, body: '{"a":"é"}', timeoutMs: 2000 });
      assert.equal(r.status, 200);
    }
    assert.ok(target.connections - before <= 1, `${target.connections - before} new connections for 5 sequential requests`);
    const sent = target.requests[at]!;
    assert.match(sent, /^POST \/hook\?n=0 HTTP\/1\.1\r\n/);
    assert.match(sent, new RegExp(`\r\nhost: ${new URL(target.url).host}\r\n`));
    assert.match(sent, /\r\ncontent-length: 10\r\n/);
    assert.match(sent, /\r\nwebhook-id: msg_0\r\n/);
    assert.equal(Buffer.from(sent.split('\r\n\r\n')[1]!, 'latin1').toString('utf8'), '{"a":"é"}');
  });

  it('opens a new connection after an answer that closes its own', async () => {
    // A client of its own: its one connection is the one the answer closes.
    const fresh = createOutbound({ allowPrivate: true });
    try {
      const before = target.connections;
      await fresh.request({ url: `${target.url}/no-keep-alive`, timeoutMs: 2000 });
      const r = await fresh.request({ url: `${target.url}/plain`, timeoutMs: 2000 });
      assert.equal(r.status, 200);
      assert.equal(target.connections, before + 2);
    } finally {
      fresh.close();
    }
  });

  it('refuses a header that would split the request, and a malformed answer', async () => {
    const at = target.requests.length;
    const e = await client.request({ url: `${target.url}/plain`, method: 'POST', headers: { 'x-a': 'v\r\nx-injected: 1' }, body: '', timeoutMs: 2000 }).then(() => undefined, (err: unknown) => err);
    assert.ok(e instanceof OutboundError && e.kind === 'connection', String(e));
    const bad = await client.request({ url: `${target.url}/plain`, headers: { 'bad name': 'v' }, timeoutMs: 2000 }).then(() => undefined, (err: unknown) => err);
    assert.ok(bad instanceof OutboundError && bad.kind === 'connection', String(bad));
    assert.equal(target.requests.length, at);
    const m = await client.request({ url: `${target.url}/malformed`, timeoutMs: 2000 }).then(() => undefined, (err: unknown) => err);
    assert.ok(m instanceof OutboundError && m.kind === 'connection', String(m));
  });

  it('cancels on its caller\'s signal', async () => {
    const silent = await rawServer(() => ({ pieces: [] }));
    try {
      const controller = new AbortController();
      const p = client.request({ url: `${silent.url}/`, timeoutMs: 5000, signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      const e = await p.then(() => undefined, (err: unknown) => err);
      assert.ok(e instanceof OutboundError && e.kind === 'aborted', String(e));
    } finally {
      silent.server.close();
    }
  });

  it('verifies the certificate of an https destination', async () => {
    const certs = certDir();
    const cert = certs.make('self-signed', { ip: '127.0.0.1' });
    const server = createHttpsServer({ key: cert.key, cert: cert.cert }, (_req, res) => res.end('secret'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const e = await client.request({ url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`, timeoutMs: 2000 }).then(() => undefined, (err: unknown) => err);
      assert.ok(e instanceof OutboundError && e.kind === 'connection', String(e));
      assert.match(e.message, /self[- ]signed/i);
    } finally {
      server.closeAllConnections();
      server.close();
      certs.cleanup();
    }
  });
});
