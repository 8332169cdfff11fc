import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';
import { serveProcess, type Node } from '../helpers/processes.js';
import { dpopKey, proof } from './dpop-support.js';

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * Two processes behind one public URL (as behind a load balancer): a proof
 * names that URL, so either process would take it, and only the first use
 * counts (RFC 9449 §11.1), whichever process sees it.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`a DPoP proof is single-use across two processes (${kind})`, { skip }, () => {
    const PUBLIC = 'http://gatehouse.test';
    let a: Node;
    let b: Node;
    let ports: number[];
    let dir: string;
    let databaseUrl: string;
    let env: Record<string, string>;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gh-dpop-'));
      databaseUrl = kind === 'sqlite' ? `sqlite:${join(dir, 'g.db')}` : freshDatabaseUrl('postgres');
      env = { GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET_KEY: randomBytes(32).toString('base64'), GATEHOUSE_AUTH_URL: PUBLIC };
      ports = [await freePort(), await freePort()];
      a = await serveProcess({ ...env, GATEHOUSE_AUTH_PORT: String(ports[0]) });
      b = await serveProcess({ ...env, GATEHOUSE_AUTH_PORT: String(ports[1]) });
    });
    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await dropDatabase(databaseUrl);
      rmSync(dir, { recursive: true, force: true });
    });

    it('the same proof sent to both processes at once gets a token exactly once (gatehouse client create --dpop)', async () => {
      const created = await runCli(['client', 'create', '--name', 'Batch', '--grant-types', 'client_credentials', '--scope', 'read', '--dpop', '--json'], env);
      assert.equal(created.code, 0, created.stderr);
      const client = JSON.parse(created.stdout) as { client_id: string; client_secret: string; dpop_bound_access_tokens?: boolean };
      assert.equal(client.dpop_bound_access_tokens, true);
      const auth = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
      const send = (port: number, dpop?: string) => fetch(`http://127.0.0.1:${port}/oauth/token`, {
        method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials' }),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth, ...(dpop ? { dpop } : {}) },
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));
      const missing = await send(ports[0]!);
      assert.deepEqual([missing.status, missing.body.error], [400, 'invalid_dpop_proof']);
      const key = await dpopKey();
      for (let round = 0; round < 3; round++) {
        const p = await proof(key, 'POST', `${PUBLIC}/oauth/token`);
        const answers = await Promise.all([ports[0]!, ports[1]!, ports[0]!, ports[1]!].map((port) => send(port, p)));
        assert.equal(answers.filter((r) => r.status === 200 && r.body.token_type === 'DPoP').length, 1, `round ${round}: ${answers.map((r) => r.status).join(',')}`);
        assert.equal(answers.filter((r) => r.status === 400 && r.body.error === 'invalid_dpop_proof').length, 3);
      }
    });
  });
}
