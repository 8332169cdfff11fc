/**
 * Brute-force throttling of every credential (src/core/throttle.ts), raced for
 * real: 100 parallel requests, spread over two Gatehouse processes sharing one
 * database (a SQLite file, PostgreSQL) or one Redis, each from its own
 * loopback address unless the address is what is being limited.
 *
 * Passwords (argon2) are counted before they are checked, so at most the
 * limit are ever evaluated: 5 per account, 20 per address. Client secrets and
 * the admin token (SHA-256 compares) are counted when wrong, each decision on
 * the count its own increment returned, so exactly the limit answer 401 and
 * the rest 429 with Retry-After; while locked the right one gets 429 too.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createClient, createUser } from '../../src/core/admin.js';
import { systemClock, type Storage } from '../../src/core/ports.js';
import { argon2Hasher } from '../../src/infra/argon2.js';
import { openStorage } from '../../src/store/index.js';
import { parseForm } from '../helpers/agent.js';
import { postgresAvailable } from '../helpers/db.js';
import { loopback, sendFrom, serveProcess, type Node, type RawResponse } from '../helpers/processes.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';
import { sharedDatabaseUrl } from '../store/fixtures.js';
import { basic } from './support.js';

const PASSWORD = 'correct horse battery staple';
const ADMIN_TOKEN = `admin-${randomBytes(16).toString('hex')}`;
const N = 100;

const backends = [
  { name: 'SQLite file', kind: 'sqlite' as const, redis: false, skip: false as string | false },
  { name: 'PostgreSQL', kind: 'postgres' as const, redis: false, skip: (await postgresAvailable()) ? false : 'PostgreSQL not reachable' },
  { name: 'Redis', kind: 'sqlite' as const, redis: true, skip: (await redisAvailable()) ? false : 'Redis not reachable' },
];

const tally = <T extends string>(labels: T[]) => labels.reduce<Record<string, number>>((m, l) => ({ ...m, [l]: (m[l] ?? 0) + 1 }), {});

/** 429 with a Retry-After within the 15-minute window, and the endpoint's JSON error. */
function assertThrottled(res: RawResponse, error: string): void {
  assert.equal(res.status, 429, res.body.slice(0, 200));
  const after = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(after) && after >= 1 && after <= 900, `Retry-After ${res.headers['retry-after']}`);
  assert.equal((JSON.parse(res.body) as { error: string }).error, error);
}

for (const backend of backends) {
  describe(`credential throttling across two processes (${backend.name})`, { skip: backend.skip }, () => {
    let nodes: Node[] = [];
    let storage: Storage;
    let cleanup: () => Promise<void>;
    const prefix = freshRedisPrefix();
    /** Request i goes to one process or the other. */
    const node = (i: number) => nodes[i % 2]!.url;

    before(async () => {
      const shared = sharedDatabaseUrl(backend.kind);
      cleanup = shared.cleanup;
      const env = {
        GATEHOUSE_DATABASE_URL: shared.url, GATEHOUSE_ROLES: 'auth', GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN,
        ...(backend.redis ? { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix } : {}),
      };
      // One after the other: the first migrates the fresh database.
      nodes.push(await serveProcess(env));
      nodes.push(await serveProcess(env));
      storage = await openStorage(shared.url);
    });
    after(async () => {
      await Promise.all(nodes.map((n) => n.stop()));
      nodes = [];
      await storage?.close();
      await cleanup?.();
      if (backend.redis) await dropRedisPrefix(prefix);
    });

    const user = async (label: string) => {
      const username = `${label}-${randomBytes(4).toString('hex')}`;
      await createUser(storage, argon2Hasher(), systemClock, { username, email: `${username}@example.test`, password: PASSWORD });
      return username;
    };
    const client = async (grantTypes: string[]) => {
      const { client: c, secret } = await createClient(storage, systemClock, { name: 'App', redirectUris: [], grantTypes });
      return { id: c.id, secret: secret! };
    };

    /** The sign-in form's cookie and fields, valid on either process (the CSRF token derives from the cookie). */
    const loginForm = async () => {
      const page = await sendFrom(loopback(0, 9), node(0), '/login');
      const cookie = [page.headers['set-cookie'] ?? []].flat().map((c) => c.split(';')[0]).join('; ');
      return { cookie, fields: parseForm(page.body).fields };
    };
    const signIn = (form: { cookie: string; fields: Record<string, string> }, from: string, i: number, username: string, password: string) =>
      sendFrom(from, node(i), '/login', { headers: { cookie: form.cookie }, form: { ...form.fields, username, password } });
    const passwordGrant = (c: { id: string; secret: string }, from: string, i: number, username: string, password: string) =>
      sendFrom(from, node(i), '/oauth/token', { headers: { authorization: basic(c.id, c.secret) }, form: { grant_type: 'password', username, password } });

    /** evaluated: the password was checked (401 / invalid credentials); refused: it was not (429 / too many). */
    const outcome = (res: RawResponse): 'evaluated' | 'refused' | 'signed-in' | 'other' => {
      if (res.status === 401) return 'evaluated';
      if (res.status === 429) return 'refused';
      if (res.status === 303 || res.status === 200) return 'signed-in';
      if (res.status === 400) {
        const d = (JSON.parse(res.body) as { error_description?: string }).error_description ?? '';
        if (/too many/.test(d)) return 'refused';
        if (/invalid resource owner credentials/.test(d)) return 'evaluated';
      }
      return 'other';
    };

    // Guards `admit` before the argon2 verify in src/core/login.ts `LoginGuard.attempt`:
    // a read-then-count limiter lets every parallel attempt through to argon2.
    it(`evaluates 5 of ${N} parallel sign-ins for one account (form and password grant), then refuses the right password`, async () => {
      const name = await user('acct');
      const c = await client(['password']);
      const form = await loginForm();
      const results = await Promise.all(Array.from({ length: N }, (_, i) =>
        i % 3 === 0 ? passwordGrant(c, loopback(i), i, name, `wrong ${i}`) : signIn(form, loopback(i), i, name, `wrong ${i}`)));
      assert.deepEqual(tally(results.map(outcome)), { evaluated: 5, refused: N - 5 });
      // Locked means locked, on both processes, through both doors.
      const locked = await signIn(form, loopback(0, 3), 0, name, PASSWORD);
      assert.equal(locked.status, 429);
      assert.ok(Number(locked.headers['retry-after']) >= 1);
      assert.equal(outcome(await passwordGrant(c, loopback(1, 3), 1, name, PASSWORD)), 'refused');
      assert.equal(outcome(await signIn(form, loopback(2, 3), 1, name.toUpperCase(), PASSWORD)), 'refused', 'the name in another case is the same account');
    });

    // Guards the per-address counter of `admit`: names each under their own limit, one address.
    it(`evaluates 20 of ${N} parallel sign-ins from one address, then refuses a right password from it but not from elsewhere`, async () => {
      const name = await user('addr');
      const form = await loginForm();
      const from = loopback(0, 4);
      const results = await Promise.all(Array.from({ length: N }, (_, i) => signIn(form, from, i, `spray-${i}-${name}`, 'Password1!')));
      assert.deepEqual(tally(results.map(outcome)), { evaluated: 20, refused: N - 20 });
      assert.equal((await signIn(form, from, 0, name, PASSWORD)).status, 429);
      assert.equal((await signIn(form, loopback(1, 4), 1, name, PASSWORD)).status, 303);
    });

    // Guards `succeeded` in src/core/throttle.ts: the account counter is reset, the address counter
    // only gets the success's own count back (so many sign-ins from one address never lock it).
    it('a right password forgives the account its failures, and the address neither gains nor loses failures', async () => {
      const form = await loginForm();
      const acct = await user('forgiven');
      const statuses = async (n: number, password: string, from: (i: number) => string, name = acct) => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) out.push((await signIn(form, from(i), i, name, password)).status);
        return out;
      };
      assert.deepEqual(await statuses(4, 'wrong', (i) => loopback(i, 5)), [401, 401, 401, 401]);
      assert.deepEqual(await statuses(1, PASSWORD, () => loopback(10, 5)), [303]);
      assert.deepEqual(await statuses(6, 'wrong', (i) => loopback(20 + i, 5)), [401, 401, 401, 401, 401, 429]);

      const from = loopback(0, 6);
      const regular = await user('regular');
      for (let i = 0; i < 19; i++) assert.equal((await signIn(form, from, i, `typo-${i}-${regular}`, 'wrong')).status, 401);
      assert.deepEqual(await statuses(3, PASSWORD, () => from, regular), [303, 303, 303], 'successes do not count against the address');
      assert.equal((await signIn(form, from, 0, `typo-x-${regular}`, 'wrong')).status, 401, 'nor do they clear its failures: this is the 20th');
      assert.equal((await signIn(form, from, 1, regular, PASSWORD)).status, 429);
    });

    // Guards the take-back of refused attempts in `admit`: counting them would lock an address
    // that is one failure short of its limit as soon as a few people sign in from it at once.
    it('right passwords refused in a burst from one address do not count as failures', async () => {
      const form = await loginForm();
      const from = loopback(0, 14);
      for (let i = 0; i < 19; i++) assert.equal((await signIn(form, from, i, `miss-${i}`, 'wrong')).status, 401);
      const names = await Promise.all(Array.from({ length: 10 }, (_, i) => user(`burst${i}`)));
      const results = await Promise.all(names.map((n, i) => signIn(form, from, i, n, PASSWORD)));
      const counts = tally(results.map(outcome));
      assert.ok((counts.refused ?? 0) >= 1 && (counts['signed-in'] ?? 0) >= 1 && counts.refused! + counts['signed-in']! === 10, JSON.stringify(counts));
      // The address holds its 19 failures, nothing more.
      assert.equal((await signIn(form, from, 0, names[0]!, PASSWORD)).status, 303);
      assert.equal((await signIn(form, from, 1, 'miss-x', 'wrong')).status, 401);
      assert.equal((await signIn(form, from, 0, names[0]!, PASSWORD)).status, 429);
    });

    const clientCredentials = (c: { id: string; secret: string }, from: string, i: number) =>
      sendFrom(from, node(i), '/oauth/token', { headers: { authorization: basic(c.id, c.secret) }, form: { grant_type: 'client_credentials' } });

    // Guards `check`/`failed` in src/core/oauth/client-auth.ts `authenticateClient`.
    it(`answers 401 to 5 of ${N} parallel wrong client secrets and 429 to the rest; the right secret gets 429 at every endpoint`, async () => {
      const c = await client(['client_credentials']);
      const other = await client(['client_credentials']);
      const results = await Promise.all(Array.from({ length: N }, (_, i) => clientCredentials({ id: c.id, secret: `wrong-${i}` }, loopback(i, 7), i)));
      assert.deepEqual(tally(results.map((r) => String(r.status))), { 401: 5, 429: N - 5 });
      for (const r of results) {
        if (r.status === 429) assertThrottled(r, 'invalid_client');
        else assert.equal((JSON.parse(r.body) as { error: string }).error, 'invalid_client');
      }
      for (const i of [0, 1]) assertThrottled(await clientCredentials(c, loopback(200 + i, 7), i), 'invalid_client');
      const introspection = await sendFrom(loopback(210, 7), node(0), '/oauth/check_token', { headers: { authorization: basic(c.id, c.secret) }, form: { token: 'x' } });
      assertThrottled(introspection, 'invalid_client');
      const revocation = await sendFrom(loopback(211, 7), node(1), '/oauth/revoke', { headers: { authorization: basic(c.id, c.secret) }, form: { token: 'x' } });
      assertThrottled(revocation, 'invalid_client');
      // Another client from the same addresses is not affected.
      assert.equal((await clientCredentials(other, loopback(0, 7), 0)).status, 200);
    });

    it(`answers 401 to 20 of ${N} parallel wrong client secrets from one address, then 429 to a right one from it but not from elsewhere`, async () => {
      const c = await client(['client_credentials']);
      const from = loopback(0, 8);
      const results = await Promise.all(Array.from({ length: N }, (_, i) => clientCredentials({ id: `guess-${i}-${c.id}`, secret: 'wrong' }, from, i)));
      assert.deepEqual(tally(results.map((r) => String(r.status))), { 401: 20, 429: N - 20 });
      assertThrottled(await clientCredentials(c, from, 1), 'invalid_client');
      assert.equal((await clientCredentials(c, loopback(1, 8), 0)).status, 200);
    });

    // Cheap credentials write nothing on success, so a busy client's traffic cannot clear an attacker's failures.
    it('a right client secret neither counts nor forgives failures', async () => {
      const c = await client(['client_credentials']);
      const seq: number[] = [];
      for (let i = 0; i < 4; i++) seq.push((await clientCredentials({ id: c.id, secret: 'wrong' }, loopback(i, 10), i)).status);
      for (let i = 0; i < 3; i++) seq.push((await clientCredentials(c, loopback(i, 10), i)).status);
      for (let i = 0; i < 2; i++) seq.push((await clientCredentials({ id: c.id, secret: 'wrong' }, loopback(i, 10), i)).status);
      seq.push((await clientCredentials(c, loopback(9, 10), 1)).status);
      assert.deepEqual(seq, [401, 401, 401, 401, 200, 200, 200, 401, 429, 429]);
    });

    // Guards the onRequest hook of src/http/auth/admin-routes.ts. Last: it locks the admin API for the window.
    it(`answers 401 to 5 of ${N} parallel wrong admin tokens and 429 to the rest; then the right token gets 429`, async () => {
      const admin = (token: string | undefined, from: string, i: number) =>
        sendFrom(from, node(i), '/admin/clients', { headers: token ? { authorization: `Bearer ${token}` } : {} });
      assert.equal((await admin(ADMIN_TOKEN, loopback(0, 11), 0)).status, 200);
      // No credential presented guesses nothing and is not counted.
      for (let i = 0; i < 10; i++) assert.equal((await admin(undefined, loopback(0, 11), i)).status, 401);
      const results = await Promise.all(Array.from({ length: N }, (_, i) => admin(`guess-${i}`, loopback(i, 12), i)));
      assert.deepEqual(tally(results.map((r) => String(r.status))), { 401: 5, 429: N - 5 });
      for (const r of results.filter((x) => x.status === 429)) assertThrottled(r, 'invalid_token');
      for (const i of [0, 1]) assertThrottled(await admin(ADMIN_TOKEN, loopback(0, 13), i), 'invalid_token');
    });
  });
}
