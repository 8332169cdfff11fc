import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { databaseKinds, freshDatabaseUrl, dropDatabase, PG_URL } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson } from '../bot/support.js';
import { ADMIN_TOKEN, admin } from '../notify/support.js';

/** A secret as it might sit in a file: its text, and that text in base64, base64url and hex. */
function forms(label: string, secret: string | Buffer): [string, Buffer][] {
  const raw = Buffer.isBuffer(secret) ? secret : Buffer.from(secret, 'utf8');
  return [
    [`${label} (raw)`, raw],
    [`${label} (base64)`, Buffer.from(raw.toString('base64'))],
    [`${label} (base64url)`, Buffer.from(raw.toString('base64url'))],
    [`${label} (hex)`, Buffer.from(raw.toString('hex'))],
  ];
}

/** A signing key as text (PEM), as its DER body, and as its private scalar `d`. */
function keyForms(label: string, pem: string): [string, Buffer][] {
  const body = pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  const d = (createPrivateKey(pem).export({ format: 'jwk' }) as { d: string }).d;
  return [...forms(`${label} PEM`, pem), ...forms(`${label} DER`, Buffer.from(body, 'base64')), ...forms(`${label} d`, Buffer.from(d, 'base64url'))];
}

/** Every row of every table in the test's PostgreSQL schema, as text. */
async function pgDump(url: string): Promise<Buffer> {
  const schema = new URL(url).searchParams.get('schema')!;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    const { rows: tables } = await c.query<{ table_name: string }>('select table_name from information_schema.tables where table_schema = $1', [schema]);
    const out: string[] = [];
    for (const t of tables) {
      const { rows } = await c.query(`select row_to_json(t)::text as j from ${schema}."${t.table_name}" t`);
      out.push(...rows.map((r: { j: string }) => r.j));
    }
    return Buffer.from(out.join('\n'));
  } finally {
    await c.end();
  }
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`secrets at rest: a dump of the database holds none of them (${kind})`, { skip }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-dump-'));
    const dbFile = join(dir, 'gatehouse.db');
    const databaseUrl = kind === 'sqlite' ? `sqlite:${dbFile}` : freshDatabaseUrl('postgres');
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: kind, env: {
        GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_ROLES: 'auth,bot', GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true', GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN,
      } });
    });
    after(async () => {
      await server.close();
      await dropDatabase(databaseUrl);
      rmSync(dir, { recursive: true, force: true });
    });

    it('webhook secrets, a Bot API secret_token, signing keys and a token BotFather showed once', async () => {
      const secrets: [string, Buffer][] = [];
      // An event endpoint, then a rotation: the first secret becomes the previous one (still stored).
      const created = await admin(server.url, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', events: '*' });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      const rotated = await admin(server.url, 'POST', `/webhooks/${String(created.json.id)}/secret`);
      assert.equal(rotated.status, 200);
      for (const [label, s] of [['endpoint secret', created.json.secret], ['rotated endpoint secret', rotated.json.secret]] as const) {
        secrets.push(...forms(label, s as string), ...forms(`${label} key`, Buffer.from((s as string).replace(/^whsec_/, ''), 'base64')));
      }

      // A bot made through BotFather; its token is shown once (and read here).
      const chat = new ChatApi(server.bot!.url, await signedInPerson(server, 'alice'));
      const token = await botViaBotFather(chat, 'Dump Bot', 'dump_secrets_bot');
      secrets.push(...forms('bot token', token), ...forms('bot token secret part', token.split(':')[1]!));
      const secretToken = `st_${randomBytes(24).toString('hex')}`;
      const set = await botApi(server.bot!.url, token, 'setWebhook', { url: 'http://127.0.0.1:9/tg', secret_token: secretToken });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      secrets.push(...forms('secret_token', secretToken));

      // Signing keys: the first one, and the one a rotation adds.
      await server.gh.keys.rotate(Date.now() + 3_600_000);
      const keys = await server.gh.storage.keys.list();
      // An ES256 and an RS256 key, each rotated once.
      assert.equal(keys.length, 4);
      for (const k of keys) secrets.push(...keyForms(`signing key ${k.kid}`, k.privateKeyPem));

      let dump: Buffer;
      if (kind === 'sqlite') {
        // Read while the server runs: the write-ahead log holds the recent writes.
        const files = [dbFile, `${dbFile}-wal`, `${dbFile}-shm`].filter((f) => existsSync(f));
        assert.ok(files.length >= 2, `database files: ${files.join(', ')}`);
        dump = Buffer.concat(files.map((f) => readFileSync(f)));
      } else {
        dump = await pgDump(databaseUrl);
      }
      // The dump is the real thing: what is not secret is in it.
      assert.ok(dump.includes('dump_secrets_bot'), 'the bot username is in the dump');
      assert.ok(dump.includes('http://127.0.0.1:9/hook'), 'the endpoint URL is in the dump');
      const found = secrets.filter(([, bytes]) => dump.includes(bytes)).map(([label]) => label);
      assert.deepEqual(found, []);

      // Everything still works from what is stored.
      assert.equal((await botApi(server.bot!.url, token, 'getWebhookInfo')).status, 200);
      const listed = await admin(server.url, 'GET', `/webhooks/${String(created.json.id)}`);
      assert.equal(listed.status, 200);
      assert.equal((await server.gh.storage.events.endpoints.get(String(created.json.id)))?.secret, rotated.json.secret);
      assert.equal((await server.gh.storage.events.endpoints.get(String(created.json.id)))?.previousSecret, created.json.secret);
    });
  });
}
