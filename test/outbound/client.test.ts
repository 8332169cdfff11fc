import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundError, parseRetryAfter } from '../../src/core/outbound.js';
import { createOutbound } from '../../src/infra/outbound/client.js';
import type { Lookup } from '../../src/infra/outbound/destination.js';

/** A loopback HTTP server that counts the requests it gets. */
async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, hits };
}

const rejection = async (p: Promise<unknown>): Promise<OutboundError> => {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof OutboundError, String(e));
    return e;
  }
  assert.fail('expected the request to fail');
};

describe('the outbound client (src/infra/outbound/client.ts)', () => {
  let target: Awaited<ReturnType<typeof listen>>;
  before(async () => {
    target = await listen((req, res) => {
      if (req.url === '/redirect') return res.writeHead(302, { location: `http://127.0.0.1:${target.port}/secret` }).end();
      if (req.url === '/big') return res.end(Buffer.alloc(1 << 20, 'x'));
      if (req.url === '/slow') return; // never answers
      res.writeHead(200, { 'content-type': 'text/plain' }).end('inside');
    });
  });
  after(() => {
    target.server.closeAllConnections();
    target.server.close();
  });

  it('refuses IPv4-compatible, mapped, NAT64 and 6to4 loopback literals, and never connects', async () => {
    const client = createOutbound({ allowPrivate: false });
    try {
      for (const host of ['[::127.0.0.1]', '[::ffff:127.0.0.1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::]', '127.0.0.1', '2130706433', '0x7f.1', 'localhost']) {
        const e = await rejection(client.request({ url: `http://${host}:${target.port}/secret`, timeoutMs: 2000 }));
        assert.equal(e.kind, 'refused', host);
      }
      assert.deepEqual(target.hits, []);
    } finally {
      client.close();
    }
  });

  it('checks the address it connects to, not an earlier answer (DNS rebinding)', async () => {
    // A resolver under the attacker's control: public for the check, loopback from then on.
    let asked = 0;
    const rebinding: Lookup = (_host, _opts, cb) => {
      asked++;
      cb(null, asked === 1 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    };
    const client = createOutbound({ allowPrivate: false, lookup: rebinding });
    try {
      const url = `http://rebind.example.com:${target.port}/secret`;
      assert.equal(await client.check(url, { resolve: true }), undefined);
      const e = await rejection(client.request({ url, timeoutMs: 2000 }));
      assert.equal(e.kind, 'refused');
      assert.match(e.message, /127\.0\.0\.1 is reserved: loopback/);
      assert.equal(asked, 2);
      assert.deepEqual(target.hits, []);
    } finally {
      client.close();
    }
  });

  it('checks every address of an answer, not only the first', async () => {
    const mixed: Lookup = (_host, _opts, cb) => cb(null, [{ address: '93.184.216.34', family: 4 }, { address: '::ffff:7f00:1', family: 6 }]);
    const client = createOutbound({ allowPrivate: false, lookup: mixed });
    try {
      const url = `http://mixed.example.com:${target.port}/secret`;
      assert.equal((await client.check(url, { resolve: true }))?.reason, 'address');
      assert.equal((await rejection(client.request({ url, timeoutMs: 2000 }))).kind, 'refused');
      assert.deepEqual(target.hits, []);
    } finally {
      client.close();
    }
  });

  it('lets allowPrivate reach loopback, and follows no redirect', async () => {
    const client = createOutbound({ allowPrivate: true });
    try {
      const ok = await client.request({ url: `http://127.0.0.1:${target.port}/`, timeoutMs: 2000 });
      assert.equal(ok.status, 200);
      assert.equal(ok.body, 'inside');
      const hop = await client.request({ url: `http://127.0.0.1:${target.port}/redirect`, method: 'POST', body: '{}', timeoutMs: 2000 });
      assert.equal(hop.status, 302);
      assert.ok(!target.hits.includes('/secret'), 'the redirect target was not requested');
    } finally {
      client.close();
    }
  });

  it('caps the body it reads and the time it waits', async () => {
    const client = createOutbound({ allowPrivate: true });
    try {
      const big = await client.request({ url: `http://127.0.0.1:${target.port}/big`, timeoutMs: 5000, maxBytes: 1000 });
      assert.equal(big.truncated, true);
      assert.equal(big.body.length, 1000);
      const t0 = Date.now();
      const e = await rejection(client.request({ url: `http://127.0.0.1:${target.port}/slow`, timeoutMs: 300 }));
      assert.equal(e.kind, 'timeout');
      assert.ok(Date.now() - t0 < 2000);
    } finally {
      client.close();
    }
  });
});

describe('Retry-After (RFC 9110 §10.2.3)', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const cases: [string | string[] | undefined, number | undefined][] = [
    ['120', 120_000], ['0', 0], [' 7 ', 7000], [['30', '60'], 30_000],
    // HTTP-date: IMF-fixdate and the two obsolete forms recipients must accept (§5.6.7)
    ['Thu, 01 Jan 2026 00:01:30 GMT', 90_000], ['Thursday, 01-Jan-26 00:01:30 GMT', 90_000], ['Thu Jan  1 00:01:30 2026', 90_000],
    // a date in the past means now
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    // not delay-seconds, not a date
    ['-1', undefined], ['1.5', undefined], ['1e3', undefined], ['soon', undefined], ['', undefined], [undefined, undefined], ['2026-01-01', undefined], ['2026', 2_026_000],
  ];
  for (const [value, ms] of cases) {
    it(`${JSON.stringify(value)} → ${ms}`, () => assert.equal(parseRetryAfter(value, now), ms));
  }
});
