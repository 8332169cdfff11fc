import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli as run } from '../helpers/cli.js';

describe('gatehouse webhook commands', () => {
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gh-webhook-cli-'));
    env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gh.db')}` };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('webhook create --json prints {"id","url","events","secret"}; list shows it without the secret', async () => {
    const r = await run(['webhook', 'create', '--url', 'https://hooks.example.test/gatehouse', '--events', 'user.login.succeeded,client.created', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(out), ['id', 'url', 'events', 'secret']);
    assert.deepEqual(out.events, ['user.login.succeeded', 'client.created']);
    assert.match(out.secret, /^whsec_/);
    const list = await run(['webhook', 'list', '--json'], env);
    assert.equal(list.code, 0, list.stderr);
    const [listed] = JSON.parse(list.stdout).webhooks;
    assert.equal(listed.id, out.id);
    assert.equal(listed.secret, undefined);
    const messages = await run(['webhook', 'messages', '--id', out.id, '--status', 'failed', '--json'], env);
    assert.deepEqual(JSON.parse(messages.stdout), { messages: [] });
  });

  it('refuses loopback and private URLs, unknown event types and unknown messages, with a message on stderr', async () => {
    const loop = await run(['webhook', 'create', '--url', 'http://127.0.0.1:9/hook', '--events', '*', '--json'], env);
    assert.equal(loop.code, 1);
    assert.match(loop.stderr, /private|loopback/);
    assert.equal(loop.stdout, '');
    const unknown = await run(['webhook', 'create', '--url', 'https://hooks.example.test/x', '--events', 'user.exploded', '--json'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /unknown event type/);
    const noMsg = await run(['webhook', 'resend', '--id', 'ep_nope', '--message', 'msg_nope', '--json'], env);
    assert.equal(noMsg.code, 1);
    assert.match(noMsg.stderr, /unknown webhook endpoint/);
  });
});
