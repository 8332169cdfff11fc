import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { rotateClientSecret } from '../../src/core/admin.js';
import { sha256 } from '../../src/core/crypto.js';
import type { SqlStorage } from '../../src/store/index.js';
import { Agent } from '../helpers/agent.js';
import { issueCode, REDIRECT } from '../helpers/authorize.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** Every value of every row of every table, tables found from the catalog so new ones are covered too. */
async function dumpDatabase(storage: SqlStorage): Promise<{ tables: string[]; text: string }> {
  const { db, dialect } = storage.database;
  const { rows: tables } = dialect === 'sqlite'
    ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
    : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db);
  let text = '';
  for (const { name } of tables) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db);
    for (const row of rows) text += `${name}: ${JSON.stringify(row)}\n`;
  }
  return { tables: tables.map((t) => t.name), text };
}

/** RFC 6819 §5.1.4.1.3: a copy of the database must not hand out usable credentials. */
for (const { kind, skip } of await databaseKinds()) {
  describe(`storage keeps only hashes of secrets (${kind})`, { skip }, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: kind });
    });
    after(() => server.close());

    it('holds no raw client secret, code, token, session id or password after real issuance', async () => {
      const user = await server.createUser('hashonly');
      const client = await server.createClient({
        redirectUris: [REDIRECT], scope: 'user read', tokenFormat: 'opaque',
        grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
      });
      const token = async (secret: string, fields: Record<string, string>) => {
        const res = await fetch(`${server.url}/oauth/token`, {
          method: 'POST',
          headers: { authorization: `Basic ${Buffer.from(`${client.id}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(fields),
        });
        assert.equal(res.status, 200, await res.clone().text());
        return (await res.json()) as Record<string, string>;
      };

      const machine = await token(client.secret!, { grant_type: 'client_credentials', scope: 'read' });

      const agent = new Agent(server.url);
      const { code, verifier } = await issueCode(agent, client.id, { scope: 'user' }, { user });
      const issued = await token(client.secret!, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
      const rotated = await token(client.secret!, { grant_type: 'refresh_token', refresh_token: issued.refresh_token! });
      const newSecret = await rotateClientSecret(server.gh.storage, server.gh.clock, client.id, 60);

      const secrets: Record<string, string | undefined> = {
        'client secret': client.secret,
        'rotated client secret': newSecret,
        'user password': user.password,
        'session cookie': agent.cookie('gh_session'),
        'csrf cookie': agent.cookie('gh_csrf'),
        'authorization code': code,
        'code verifier': verifier,
        'client_credentials access token': machine.access_token,
        'access token': issued.access_token,
        'refresh token': issued.refresh_token,
        'rotated access token': rotated.access_token,
        'rotated refresh token': rotated.refresh_token,
      };
      for (const [what, value] of Object.entries(secrets)) assert.ok(value && value.length >= 16, `${what} was issued`);

      const { tables, text } = await dumpDatabase(server.gh.storage as SqlStorage);
      for (const t of ['clients', 'authorization_codes', 'refresh_tokens', 'access_tokens', 'sessions']) assert.ok(tables.includes(t), `table ${t} read`);
      for (const [what, value] of Object.entries(secrets)) {
        assert.ok(!text.includes(value!), `the database holds a raw ${what}`);
      }
      // And it does hold their hashes: the dump is of the database that issued them.
      for (const what of ['client secret', 'rotated client secret', 'session cookie', 'authorization code', 'client_credentials access token', 'access token', 'refresh token', 'rotated refresh token']) {
        assert.ok(text.includes(sha256(secrets[what]!)), `the database holds the hash of the ${what}`);
      }
    });
  });
}
