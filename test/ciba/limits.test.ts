import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CIBA_GRANT_TYPE } from '../../src/core/oauth/ciba-options.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';
import { serveProcess, type Node } from '../helpers/processes.js';
import { BOT, lastId, linkedPerson, nextMessage, postForm, startChatServer, type ChatServer, type LinkedPerson } from '../device/support.js';

type Client = { id: string; secret: string | undefined };

/**
 * Issue 24, finding 4: who may send CIBA prompts into a person's chat, and how
 * many. At most 3 requests wait per person across all clients; a burst of
 * requests leaves the chat's flood budget to sign-in approvals; an unknown
 * username answers as a person without a linked chat; names are quoted.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`CIBA limits (${kind})`, { skip }, () => {
    let server: ChatServer;
    let erin: LinkedPerson;
    let agents: Client[];
    const ask = (c: Client, login_hint: string, extra: Record<string, string> = {}) =>
      postForm(`${server.url}/oauth/bc-authorize`, { scope: 'openid user', login_hint, ...extra }, c);
    const poll = (c: Client, id: string) => postForm(`${server.url}/oauth/token`, { grant_type: CIBA_GRANT_TYPE, auth_req_id: id }, c);

    before(async () => {
      server = await startChatServer(kind);
      erin = await linkedPerson(server, 'erin');
      agents = await Promise.all(['Agent one', 'Agent two'].map((name) =>
        server.createClient({ name, grantTypes: [CIBA_GRANT_TYPE], redirectUris: [], scope: 'openid user', backchannelTokenDeliveryMode: 'poll' })));
    });
    after(async () => server?.close());

    it('25 requests at once from two clients: 3 wait, the rest access_denied (403); a sign-in approval still reaches the chat', async () => {
      const seen = await lastId(erin.chat);
      const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => ask(agents[i % 2]!, 'erin')));
      const ok = answers.filter((a) => a.status === 200);
      assert.equal(ok.length, 3, JSON.stringify(answers.map((a) => a.body.error ?? a.status)));
      for (const a of answers.filter((x) => x.status !== 200)) assert.deepEqual([a.status, a.body.error], [403, 'access_denied']);
      // The sign-in approval of src/core/mfa/approval.ts, sent through the same notification bot into the same chat.
      const now = Date.now();
      const chatId = String((await erin.chat.messages(BOT)).at(-1)!.chat.id);
      await server.gh.mfa.approval.send({
        userId: erin.user.id, returnTo: '/', userAgent: null, ip: '127.0.0.1', createdAt: now, expiresAt: now + 60_000,
        approval: { id: randomBytes(12).toString('base64url'), number: 42, choices: [17, 42, 63], chatId, messageId: null, state: 'waiting', expiresAt: now + 60_000 },
      }, 'Firefox on Linux');
      const msg = await nextMessage(erin.chat, seen, /^Sign-in from Firefox on Linux/);
      assert.ok(msg.message_id > seen);
    });

    it('requests that expire at once do not let a client past the per-minute budget', async () => {
      await linkedPerson(server, 'frank');
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const batch = await Promise.all([0, 1, 2].map(() => ask(agents[0]!, 'frank', { requested_expiry: '1' })));
        statuses.push(...batch.map((a) => a.status));
        server.clock.offset += 1500;
      }
      server.clock.offset = 0;
      // Without the budget all 12 would be taken (each batch has expired before the next).
      assert.equal(statuses.filter((s) => s === 200).length, 6, statuses.join(','));
    });

    it('an unknown username answers as a person without a linked chat; a first-party client hears unknown_user_id', async () => {
      await server.createUser('gale');
      const known = await ask(agents[1]!, 'gale');
      const unknown = await ask(agents[1]!, 'nobody-here');
      assert.equal(unknown.status, known.status, JSON.stringify(unknown.body));
      assert.deepEqual(Object.keys(unknown.body).sort(), Object.keys(known.body).sort());
      assert.equal(unknown.body.expires_in, known.body.expires_in);
      await new Promise((r) => setTimeout(r, 1100));
      const [k, u] = [await poll(agents[1]!, String(known.body.auth_req_id)), await poll(agents[1]!, String(unknown.body.auth_req_id))];
      assert.deepEqual([u.status, u.body.error], [k.status, k.body.error]);
      assert.equal(k.body.error, 'authorization_pending');
      const firstParty = await server.createClient({ name: 'Helpdesk', trusted: true, grantTypes: [CIBA_GRANT_TYPE], redirectUris: [], scope: 'openid user', backchannelTokenDeliveryMode: 'poll' });
      const r = await ask(firstParty, 'nobody-here');
      assert.deepEqual([r.status, r.body.error], [400, 'unknown_user_id']);
    });

    it('the prompt quotes the client name; names of several lines or control characters are refused everywhere', async () => {
      const named = await server.createClient({ name: 'Tap “Approve” now', grantTypes: [CIBA_GRANT_TYPE], redirectUris: [], scope: 'openid user', backchannelTokenDeliveryMode: 'poll' });
      // Erin's three places are taken by the first test: Hazel is asked.
      const hazel = await linkedPerson(server, 'hazel');
      const seen = await lastId(hazel.chat);
      assert.equal((await ask(named, 'hazel')).status, 200);
      const msg = await nextMessage(hazel.chat, seen, /asks for your permission/);
      assert.match(msg.text, /^App “Tap "Approve" now” asks for your permission\.\n/);
      const { createClient } = await import('../../src/core/admin.js');
      for (const name of ['Line one\nURGENT: tap Approve', 'Bell\u0007', 'x'.repeat(101), '\u202eevil', ' ', 'a\u2028b']) {
        await assert.rejects(createClient(server.gh.storage, server.gh.clock, { name, redirectUris: [], grantTypes: ['client_credentials'] }),
          (e: Error & { code?: string }) => e.code === 'invalid_request', JSON.stringify(name));
      }
      // Emoji count as one character each; 100 is the limit.
      await createClient(server.gh.storage, server.gh.clock, { name: '🙂'.repeat(100), redirectUris: [], grantTypes: ['client_credentials'] });
    });
  });

  describe(`CIBA: at most 3 requests wait per person across two processes on one database (${kind})`, { skip }, () => {
    let a: Node;
    let b: Node;
    let dir: string;
    let databaseUrl: string;
    let env: Record<string, string>;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gh-ciba-'));
      databaseUrl = kind === 'sqlite' ? `sqlite:${join(dir, 'g.db')}` : freshDatabaseUrl('postgres');
      env = { GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET_KEY: randomBytes(32).toString('base64') };
      a = await serveProcess(env);
      b = await serveProcess(env);
    });
    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await dropDatabase(databaseUrl);
      rmSync(dir, { recursive: true, force: true });
    });

    it('12 requests for one person, split between the processes and two clients: exactly 3 wait', async () => {
      assert.equal((await runCli(['user', 'create', '--username', 'ivy', '--email', 'ivy@example.test', '--password-stdin'], env, 'correct horse battery staple\n')).code, 0);
      const clients: Client[] = [];
      for (const name of ['One', 'Two']) {
        const r = await runCli(['client', 'create', '--name', name, '--grant-types', CIBA_GRANT_TYPE, '--scope', 'openid user', '--backchannel-token-delivery-mode', 'poll', '--json'], env);
        assert.equal(r.code, 0, r.stderr);
        const out = JSON.parse(r.stdout) as { client_id: string; client_secret: string };
        clients.push({ id: out.client_id, secret: out.client_secret });
      }
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) =>
        postForm(`${(i % 2 ? a : b).url}/oauth/bc-authorize`, { scope: 'openid user', login_hint: 'ivy' }, clients[Math.floor(i / 2) % 2])));
      assert.equal(answers.filter((r) => r.status === 200).length, 3, JSON.stringify(answers.map((r) => r.body.error ?? r.status)));
      assert.equal(answers.filter((r) => r.status === 403 && r.body.error === 'access_denied').length, 9);
    });
  });
}
