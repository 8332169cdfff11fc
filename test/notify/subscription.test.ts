import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage, type SqlStorage } from '../../src/store/index.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';
import { serve, type Node } from './processes.js';
import { admin } from './support.js';

interface Issued {
  /** performance.now() when the request was sent. */
  sentAt: number;
  jti: string | undefined;
  node: number;
}

const basic = (c: { id: string; secret: string }) => `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret)}`).toString('base64')}`;

async function token(node: Node, client: { id: string; secret: string }): Promise<{ status: number; jti: string | undefined }> {
  const res = await fetch(`${node.url}/oauth/token`, {
    method: 'POST', headers: { authorization: basic(client), 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials',
  });
  const body = (await res.json()) as { access_token?: string };
  const parts = body.access_token?.split('.');
  const jti = parts?.length === 3 ? (JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { jti: string }).jti : undefined;
  return { status: res.status, jti };
}

async function client(node: Node, name: string, format: 'jwt' | 'opaque'): Promise<{ id: string; secret: string }> {
  const r = await admin(node.url, 'POST', '/clients', { client_name: name, grant_types: ['client_credentials'], token_format: format, token_endpoint_auth_method: 'client_secret_basic' });
  assert.equal(r.status, 201);
  return { id: r.json.client_id as string, secret: r.json.client_secret as string };
}

/**
 * The subscription cache of every process: once the call that subscribes an
 * endpoint has answered, every token either process issues records its
 * token.issued event (the trial lost the first one of each process), and no
 * event is recorded for a token not issued.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`token.issued across two processes after a subscription (${kind})`, { skip }, () => {
    let dir: string;
    let url: string;
    let storage: SqlStorage;
    let nodes: Node[] = [];
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gh-sub-'));
      url = kind === 'sqlite' ? `sqlite:${join(dir, 'gh.db')}` : freshDatabaseUrl('postgres');
      storage = await openStorage(url);
      nodes = await Promise.all([serve(url, 'auth'), serve(url, 'auth')]);
    });
    after(async () => {
      for (const n of nodes) n.child.kill('SIGTERM');
      await Promise.all(nodes.map((n) => n.exited));
      await storage.close();
      await dropDatabase(url);
      rmSync(dir, { recursive: true, force: true });
    });

    it('records an event for every token issued after the subscription answered, on either process, and none other', { timeout: 60_000 }, async (t) => {
      const [a, b] = nodes as [Node, Node];
      const jwt = await client(a, 'jwt service', 'jwt');
      const opaque = await client(a, 'opaque service', 'opaque');
      const issued: Issued[] = [];
      const state = { stop: false };
      // Both processes issue tokens all along, so each has a fresh "nobody subscribes" in memory when the subscription lands.
      const load = async (node: Node, n: number) => {
        while (!state.stop) {
          const sentAt = performance.now();
          const r = await token(node, jwt);
          assert.equal(r.status, 200);
          issued.push({ sentAt, jti: r.jti, node: n });
        }
      };
      const loads = [load(a, 0), load(a, 0), load(b, 1), load(b, 1)];
      await new Promise((r) => setTimeout(r, 700));
      assert.equal((await storage.events.list({ type: 'token.issued', limit: 10 })).length, 0, 'nothing recorded while nobody subscribes');

      const ep = await admin(a.url, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/tokens', events: ['token.issued'] });
      assert.equal(ep.status, 201);
      const answeredAt = performance.now();
      const issuedAfter = (node: number) => issued.filter((t) => t.sentAt > answeredAt && t.node === node).length;
      const deadline = Date.now() + 30_000;
      while ((issuedAfter(0) < 20 || issuedAfter(1) < 20) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      state.stop = true;
      await Promise.all(loads);
      // Then opaque tokens on both, one at a time and concurrently: each stored token with its event.
      const opaqueCount = 40;
      await Promise.all(Array.from({ length: opaqueCount }, (_, i) => token(i % 2 ? b : a, opaque).then((r) => assert.equal(r.status, 200))));

      const events = await storage.events.list({ type: 'token.issued', limit: 100_000 });
      const recorded = new Set(events.map((e) => e.data.jti as string));
      assert.equal(recorded.size, events.length, 'one event per token');
      const after = issued.filter((t) => t.sentAt > answeredAt);
      assert.ok(issuedAfter(0) >= 20 && issuedAfter(1) >= 20, 'both processes issued tokens after the answer');
      const missing = after.filter((t) => !recorded.has(t.jti!));
      assert.deepEqual(missing.map((t) => `process ${t.node}: ${t.jti}`), [], 'every token issued after the answer has its event');
      const jtis = new Set(issued.map((t) => t.jti));
      const jwtEvents = events.filter((e) => e.data.client_id === jwt.id);
      for (const e of jwtEvents) assert.ok(jtis.has(e.data.jti as string), 'no event for a token not issued');
      const opaqueEvents = events.filter((e) => e.data.client_id === opaque.id);
      assert.equal(opaqueEvents.length, opaqueCount, 'events == opaque tokens');
      const deliveries = await storage.events.deliveries.list(ep.json.id as string, { limit: 100_000 });
      assert.equal(deliveries.length, events.length, 'each event queued for the endpoint');
      const early = jwtEvents.filter((e) => !after.some((x) => x.jti === e.data.jti)).length;
      t.diagnostic(`JWT tokens issued after the answer: ${issuedAfter(0)} on process 1, ${issuedAfter(1)} on process 2, ${after.length - missing.length} of ${after.length} with their event `
        + `(and ${early} issued while the subscription was propagating); opaque: ${opaqueEvents.length} events for ${opaqueCount} tokens`);
    });
  });
}
