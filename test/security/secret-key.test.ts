import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createEndpoint } from '../../src/core/notify/endpoints.js';
import { createBot } from '../../src/core/bot/manage.js';
import { KeyRing } from '../../src/core/oauth/keys.js';
import { systemClock } from '../../src/core/ports.js';
import { SecretBox, SecretKeyError, parseSecretKey } from '../../src/core/secret-box.js';
import { openStorage } from '../../src/store/index.js';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { runCli } from '../helpers/cli.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ADMIN_TOKEN, admin, Receiver } from '../notify/support.js';
import { ChatApi, botApi, signedInPerson } from '../bot/support.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl, type DbKind } from '../helpers/db.js';

const newKey = () => randomBytes(32).toString('base64');
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gh-key-'));
  dirs.push(d);
  return d;
}
/** A database that outlives one process: a SQLite file in a folder of its own, or a PostgreSQL schema. */
function durableUrl(kind: DbKind): { url: string; dir: string } {
  const dir = freshDir();
  return { url: kind === 'sqlite' ? `sqlite:${join(dir, 'gatehouse.db')}` : freshDatabaseUrl('postgres'), dir };
}

describe('SecretBox (AES-256-GCM)', () => {
  const box = new SecretBox(randomBytes(32));
  it('opens what it sealed, with a fresh nonce each time, in the v1.<key id>.<nonce>.<ciphertext> form', () => {
    const a = box.seal('whsec_abc', 'webhook_endpoints.secret:e1');
    const b = box.seal('whsec_abc', 'webhook_endpoints.secret:e1');
    assert.notEqual(a, b);
    assert.match(a, new RegExp(`^v1\\.${box.keyId}\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]+$`));
    assert.equal(box.open(a, 'webhook_endpoints.secret:e1'), 'whsec_abc');
  });
  it('refuses a value moved to another row or column, altered, or sealed under another key', () => {
    const sealed = box.seal('whsec_abc', 'webhook_endpoints.secret:e1');
    assert.throws(() => box.open(sealed, 'webhook_endpoints.secret:e2'), SecretKeyError);
    assert.throws(() => box.open(sealed, 'bots.webhook_secret:e1'), SecretKeyError);
    const body = sealed.split('.')[3]!;
    const flipped = `${body.slice(0, 2)}${body[2] === 'A' ? 'B' : 'A'}${body.slice(3)}`;
    assert.throws(() => box.open(sealed.replace(body, flipped), 'webhook_endpoints.secret:e1'), SecretKeyError);
    assert.throws(() => box.open(sealed.replace(body, body.slice(0, 8)), 'webhook_endpoints.secret:e1'), SecretKeyError);
    const other = new SecretBox(randomBytes(32));
    assert.throws(() => other.open(sealed, 'webhook_endpoints.secret:e1'), /encrypted under secret key .* but this process has key/);
  });
  it('GATEHOUSE_SECRET_KEY must be 32 bytes of base64: a clear start-up error otherwise', () => {
    assert.equal(parseSecretKey(newKey(), 'k').length, 32);
    assert.equal(parseSecretKey(randomBytes(32).toString('base64url'), 'k').length, 32);
    assert.throws(() => loadConfig({ GATEHOUSE_SECRET_KEY: randomBytes(16).toString('base64') }), (e: unknown) => e instanceof ConfigError && /GATEHOUSE_SECRET_KEY must be 32 random bytes in base64.*got 16 bytes/.test((e as Error).message));
    assert.throws(() => loadConfig({ GATEHOUSE_SECRET_KEY: `${newKey().slice(0, 40)}!!!!` }), ConfigError);
    assert.equal(loadConfig({ GATEHOUSE_SECRET_KEY: newKey() }).secretKey?.length, 44);
  });
});

describe('the key file in the data folder', () => {
  it('is created once, mode 0600, by whichever of several processes starting at once comes first; all agree on it', async () => {
    const dir = freshDir();
    const env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}`, GATEHOUSE_SECRET_KEY: '' };
    const runs = await Promise.all([1, 2, 3, 4].map(() => runCli(['client', 'list', '--json'], env)));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const file = join(dir, 'secret.key');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(parseSecretKey(readFileSync(file, 'utf8'), file).length, 32);
    // No process's own temporary file is left behind.
    assert.deepEqual((await import('node:fs')).readdirSync(dir).filter((f) => f.startsWith('secret.key')), ['secret.key']);
  });

  it('is refused when other users may read it', async () => {
    const dir = freshDir();
    const env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}`, GATEHOUSE_SECRET_KEY: '' };
    assert.equal((await runCli(['client', 'list', '--json'], env)).code, 0);
    chmodSync(join(dir, 'secret.key'), 0o644);
    const r = await runCli(['client', 'list', '--json'], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /may be read by other users \(mode 644\): chmod 600 it/);
  });
});

/** Every row of every table, in a stable order: what "nothing changed" compares. */
async function snapshot(url: string, key: string): Promise<string> {
  const s = await openStorage(url, { secretKey: key });
  try {
    const out: Record<string, unknown[]> = {};
    for (const t of ['clients', 'users', 'signing_keys', 'webhook_endpoints', 'bots', 'secret_key_check', 'notify_events']) {
      const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(t)}`.execute(s.database.db);
      out[t] = rows.map((r) => JSON.stringify(r)).sort();
    }
    return JSON.stringify(out);
  } finally {
    await s.close();
  }
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`the deployment's secret key (${kind})`, { skip }, () => {
    it('a process with another key stops at start with a clear message, changing nothing', async () => {
      const { url } = durableUrl(kind);
      const key = newKey();
      const env = { GATEHOUSE_DATABASE_URL: url, GATEHOUSE_SECRET_KEY: key };
      const made = await runCli(['webhook', 'create', '--url', 'https://hooks.example.test/k', '--events', '*', '--json'], env);
      assert.equal(made.code, 0, made.stderr);
      assert.equal((await runCli(['keys', 'rotate', '--json'], env)).code, 0);
      const before = await snapshot(url, key);

      const wrong = { ...env, GATEHOUSE_SECRET_KEY: newKey() };
      const cli = await runCli(['webhook', 'list', '--json'], wrong);
      assert.equal(cli.code, 1);
      assert.equal(cli.stdout, '');
      assert.match(cli.stderr, /this database's secrets are encrypted under secret key \S+, but GATEHOUSE_SECRET_KEY holds key \S+\. Every process of one deployment needs the same key/);
      const serve = await runCli(['serve', '--auth-port', '0', '--api-port', '0', '--bot-port', '0'], { ...wrong, GATEHOUSE_LOG_LEVEL: 'silent' });
      assert.equal(serve.code, 1);
      assert.match(serve.stderr, /encrypted under secret key/);
      assert.doesNotMatch(serve.stderr, /\n\s+at /, 'a message, not a stack trace');

      assert.equal(await snapshot(url, key), before);
      await dropDatabase(url);
    });

    it('secrets stored in clear by an older version are encrypted at start, and read back the same', async () => {
      const { url } = durableUrl(kind);
      const key = newKey();
      let s = await openStorage(url, { secretKey: key });
      const endpoint = await createEndpoint(s.events, systemClock, { url: 'https://hooks.example.test/p', events: ['*'] }, { checkUrl: async () => undefined });
      await new KeyRing(s.keys, systemClock).init();
      const bots = s.bot;
      const { bot } = await createBot(bots, systemClock, { ownerUserId: 'owner-1', username: 'plain_text_bot', name: 'Plain' });
      await bots.bots.setWebhook(bot.id, { url: 'https://hooks.example.test/tg', secretToken: 'plain-secret-token', maxConnections: 40, allowedUpdates: null, setAt: 1 });
      // The key ring holds an ES256 and an RS256 key: both as a version before encryption left them.
      const pems = new Map((await s.keys.list()).map((k) => [k.kid, k.privateKeyPem]));
      assert.equal(pems.size, 2);
      // As a version before encryption left them: plaintext, and no check row.
      const { db } = s.database;
      await db.updateTable('webhook_endpoints').set({ secret: endpoint.secret }).execute();
      await db.updateTable('bots').set({ webhook_secret: 'plain-secret-token' }).execute();
      for (const [kid, pem] of pems) await db.updateTable('signing_keys').set({ private_key_pem: pem }).where('kid', '=', kid).execute();
      await db.deleteFrom('secret_key_check').execute();
      await s.close();

      s = await openStorage(url, { secretKey: key });
      try {
        const raw = [
          ...(await s.database.db.selectFrom('webhook_endpoints').select('secret as v').execute()),
          ...(await s.database.db.selectFrom('bots').select('webhook_secret as v').execute()),
          ...(await s.database.db.selectFrom('signing_keys').select('private_key_pem as v').execute()),
        ];
        assert.equal(raw.length, 4);
        for (const r of raw) assert.match(String(r.v), new RegExp(`^v1\\.${s.secrets.keyId}\\.`));
        assert.equal((await s.events.endpoints.get(endpoint.id))?.secret, endpoint.secret);
        assert.equal((await s.bot.bots.get(bot.id))?.webhook?.secretToken, 'plain-secret-token');
        for (const k of await s.keys.list()) assert.equal(k.privateKeyPem, pems.get(k.kid));
      } finally {
        await s.close();
      }
      await dropDatabase(url);
    });

    it('secret-key rotate with the key in GATEHOUSE_SECRET_KEY prints a new key (or takes one on stdin); only the new key opens the database', async () => {
      const { url } = durableUrl(kind);
      const k1 = newKey();
      const env = { GATEHOUSE_DATABASE_URL: url, GATEHOUSE_SECRET_KEY: k1 };
      const made = await runCli(['webhook', 'create', '--url', 'https://hooks.example.test/r', '--events', '*', '--json'], env);
      assert.equal(made.code, 0, made.stderr);
      const secret = JSON.parse(made.stdout).secret as string;

      const r = await runCli(['secret-key', 'rotate', '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { key_id: string; previous_key_id: string; reencrypted: number; secret_key: string };
      assert.deepEqual(Object.keys(out), ['key_id', 'previous_key_id', 'reencrypted', 'secret_key']);
      assert.equal(out.reencrypted, 1, 'the endpoint secret (no signing key was made yet)');
      const k2 = out.secret_key;
      assert.equal(new SecretBox(parseSecretKey(k2, 'k2')).keyId, out.key_id);
      assert.equal((await runCli(['webhook', 'list', '--json'], env)).code, 1, 'the old key no longer opens it');

      const k3 = newKey();
      const viaStdin = await runCli(['secret-key', 'rotate', '--new-key-stdin', '--json'], { ...env, GATEHOUSE_SECRET_KEY: k2 }, `${k3}\n`);
      assert.equal(viaStdin.code, 0, viaStdin.stderr);
      assert.equal(JSON.parse(viaStdin.stdout).secret_key, undefined, 'a key given on stdin is not printed back');
      assert.equal((await runCli(['webhook', 'list', '--json'], { ...env, GATEHOUSE_SECRET_KEY: k2 })).code, 1);
      const s = await openStorage(url, { secretKey: k3 });
      try {
        assert.equal((await s.events.endpoints.list())[0]?.secret, secret);
      } finally {
        await s.close();
      }
      const bad = await runCli(['secret-key', 'rotate', '--new-key-stdin', '--json'], { ...env, GATEHOUSE_SECRET_KEY: k3 }, 'short');
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /the new key on stdin must be 32 random bytes/);
      await dropDatabase(url);
    });
  });
}

describe('secret-key rotate with a key file', () => {
  it('replaces the file (still 0600) after the transaction; the old key stops working', async () => {
    const { url, dir } = durableUrl('sqlite');
    const env = { GATEHOUSE_DATABASE_URL: url, GATEHOUSE_SECRET_KEY: '' };
    assert.equal((await runCli(['keys', 'rotate', '--json'], env)).code, 0);
    const file = join(dir, 'secret.key');
    const old = readFileSync(file, 'utf8').trim();
    const r = await runCli(['secret-key', 'rotate', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(out), ['key_id', 'previous_key_id', 'reencrypted', 'key_file'], 'the key stays in the file, not on stdout');
    assert.equal(out.key_file, file);
    assert.notEqual(readFileSync(file, 'utf8').trim(), old);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(!existsSync(`${file}.new`));
    assert.equal((await runCli(['client', 'list', '--json'], env)).code, 0);
    const stale = await runCli(['client', 'list', '--json'], { ...env, GATEHOUSE_SECRET_KEY: old });
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /encrypted under secret key/);

    // A rotation that committed but crashed before replacing the file: the message points at the staged key.
    renameSync(file, `${file}.new`);
    writeFileSync(file, `${old}\n`, { mode: 0o600 });
    const interrupted = await runCli(['client', 'list', '--json'], env);
    assert.equal(interrupted.code, 1);
    assert.match(interrupted.stderr, new RegExp(`secret\\.key\\.new holds key ${String(out.key_id)} from an interrupted \`gatehouse secret-key rotate\``));
  });
});

describe('secret-key rotate, round trip through a running deployment', () => {
  it('after a rotation, old JWTs verify, new ones are signed by the same key, event webhooks and Bot API webhooks carry the same secrets', async () => {
    const { url } = durableUrl('sqlite');
    const env = { GATEHOUSE_DATABASE_URL: url, GATEHOUSE_SECRET_KEY: '', GATEHOUSE_ROLES: 'auth,bot,worker', GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true', GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN };
    const receiver = await new Receiver().start();
    const telegram: IncomingHttpHeaders[] = [];
    const tg = createServer((req, res) => {
      telegram.push(req.headers);
      req.resume().on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => tg.listen(0, '127.0.0.1', resolve));
    let server: TestServer | undefined;
    const jwt = async (s: TestServer, c: { id: string; secret: string | undefined }) => {
      const res = await fetch(`${s.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      assert.equal(res.status, 200);
      return ((await res.json()) as { access_token: string }).access_token;
    };
    try {
      server = await startServer({ env });
      const hook = await admin(server.url, 'POST', '/webhooks', { url: `${receiver.url}/ev`, events: ['token.issued'] });
      assert.equal(hook.status, 201);
      receiver.secretFor('/ev', hook.json.secret as string);
      const client = await server.createClient({ grantTypes: ['client_credentials'], redirectUris: [] });
      const before = await jwt(server, client);
      const owner = await server.createUser('carol');
      const { token } = await createBot(server.gh.botStorage, systemClock, { ownerUserId: owner.id, username: 'rotation_bot', name: 'Rotation' });
      const secretToken = `st_${randomBytes(16).toString('hex')}`;
      const tgUrl = `http://127.0.0.1:${(tg.address() as AddressInfo).port}/hook`;
      assert.equal((await botApi(server.bot!.url, token, 'setWebhook', { url: tgUrl, secret_token: secretToken })).status, 200);
      assert.ok(await receiver.until(() => receiver.unique.size === 1));
      await server.close();
      server = undefined;

      const r = await runCli(['secret-key', 'rotate', '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).reencrypted, 4, 'endpoint secret, secret_token, the ES256 and RS256 signing keys');

      server = await startServer({ env });
      const jwks = createLocalJWKSet((await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet);
      await jwtVerify(before, jwks);
      const after = await jwt(server, client);
      await jwtVerify(after, jwks);
      assert.equal(decodeProtectedHeader(after).kid, decodeProtectedHeader(before).kid);
      assert.ok(await receiver.until(() => receiver.unique.size === 2), 'the event of the new token was delivered');
      assert.deepEqual(receiver.invalid, [], 'every delivery verified with the endpoint secret');

      const chat = new ChatApi(server.bot!.url, await signedInPerson(server, 'dave'));
      await chat.send('rotation_bot', 'hello');
      for (let i = 0; i < 100 && telegram.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(telegram[0]?.['x-telegram-bot-api-secret-token'], secretToken);
    } finally {
      await server?.close();
      await receiver.close();
      tg.close();
    }
  });
});
