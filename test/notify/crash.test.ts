import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEndpoint } from '../../src/core/notify/endpoints.js';
import { systemClock } from '../../src/core/ports.js';
import { openStorage, type SqlStorage } from '../../src/store/index.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl, type DbKind } from '../helpers/db.js';
import { ADMIN_TOKEN, Receiver } from './support.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.mjs');

interface Node {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

/** `gatehouse serve` in a child process; resolves once it logged that it is ready. */
function serve(databaseUrl: string, roles: string): Promise<Node> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...process.env, GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_ROLES: roles, GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_LOG_LEVEL: 'info',
      GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN, GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true',
      // A short request timeout keeps the lease a killed worker leaves behind short (timeout + 5 s).
      GATEHOUSE_WEBHOOK_TIMEOUT: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const ready = out.split('\n').find((l) => l.includes('Gatehouse ready'));
      if (ready) resolve({ child, url: (JSON.parse(ready) as { auth_url: string }).auth_url, exited });
    });
    exited.then((code) => reject(new Error(`gatehouse exited (${code}) before it was ready:\n${out}\n${err}`)));
  });
}

/** Creates clients through the admin API (each commits client.created) until `stop` is set; failures (a dead node) are ignored. */
async function produce(base: () => string, state: { stop: boolean }): Promise<void> {
  const one = async () => {
    while (!state.stop) {
      try {
        await fetch(`${base()}/admin/clients`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ client_name: 'crash', redirect_uris: ['https://app.example.test/cb'] }),
        });
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  await Promise.all([one(), one(), one()]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function crashRun(kind: DbKind, url: string, receiver: Receiver, storage: SqlStorage): Promise<string> {
  const ep = await createEndpoint(storage.events, systemClock, { url: `${receiver.url}/crash`, events: ['client.created'] }, { allowPrivate: true });
  receiver.secretFor('/crash', ep.secret);
  // Slow enough that deliveries are in flight when the process dies.
  receiver.delayMs = 15;

  // SQLite: one process serving and delivering. PostgreSQL: two worker processes sharing the queue.
  let front = await serve(url, 'auth,worker');
  let second = kind === 'postgres' ? await serve(url, 'worker') : undefined;
  const state = { stop: false };
  const producing = produce(() => front.url, state);

  await receiver.until(() => receiver.all.length >= 30, 15_000);
  front.child.kill('SIGKILL');
  second?.child.kill('SIGKILL');
  await front.exited;
  await second?.exited;
  front = await serve(url, 'auth,worker');
  if (kind === 'postgres') second = await serve(url, 'worker');
  const seenBefore = receiver.all.length;
  await receiver.until(() => receiver.all.length >= seenBefore + 30, 15_000);
  // Kill it again mid-stream, then finish on a fresh process.
  front.child.kill('SIGKILL');
  await front.exited;
  front = await serve(url, 'auth,worker');
  await sleep(500);
  state.stop = true;
  await producing;

  const committed = new Set((await storage.events.list({ type: 'client.created', limit: 100_000 })).map((e) => e.id));
  assert.ok(committed.size > 30, `events were produced (${committed.size})`);
  const received = () => new Set([...receiver.unique.values()].filter((r) => r.path === '/crash').map((r) => r.id));
  const complete = await receiver.until(() => [...committed].every((id) => received().has(id)), 45_000);
  const missing = [...committed].filter((id) => !received().has(id));
  assert.ok(complete, `every committed event delivered; missing ${missing.length} of ${committed.size}`);
  for (const id of received()) assert.ok(committed.has(id), 'nothing delivered that was not committed');
  assert.deepEqual(receiver.invalid, []);
  const duplicates = receiver.all.filter((r) => r.path === '/crash').length - received().size;

  // SIGTERM: a clean stop (in-flight attempts recorded), exit status 0.
  front.child.kill('SIGTERM');
  second?.child.kill('SIGTERM');
  assert.equal(await front.exited, 0);
  if (second) assert.equal(await second.exited, 0);
  return `${committed.size} events committed, all delivered; ${duplicates} duplicate deliveries dropped by webhook-id`;
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`notifications survive SIGKILL (${kind})`, { skip }, () => {
    let dir: string;
    let url: string;
    let receiver: Receiver;
    let storage: SqlStorage;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gh-crash-'));
      url = kind === 'sqlite' ? `sqlite:${join(dir, 'gh.db')}` : freshDatabaseUrl('postgres');
      storage = await openStorage(url);
      receiver = await new Receiver().start();
    });
    after(async () => {
      await receiver.close();
      await storage.close();
      await dropDatabase(url);
      rmSync(dir, { recursive: true, force: true });
    });

    it(`delivers every committed event at least once across kills${kind === 'postgres' ? ', with two worker processes' : ''}`, { timeout: 180_000 }, async (t) => {
      t.diagnostic(await crashRun(kind, url, receiver, storage));
    });
  });
}
