import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { signInThroughProvider, startFederated, type Federated } from '../federation/support.js';

/** A lock set in the admin console holds for third-party login too, and lifts with the unlock. */
describe('a locked account cannot sign in through another provider', { timeout: 120_000 }, () => {
  let f: Federated;
  before(async () => {
    f = await startFederated({ type: 'oauth2' });
  });
  after(() => f?.close());

  it('refused with 403 while locked, signed in once unlocked', async () => {
    const erin = await f.provider.createUser('erin');
    const first = new Agent(f.rp.url);
    await signInThroughProvider(f, first, new Agent(f.provider.url), erin);
    const create = parseForm(await (await first.get('/federation/continue')).text());
    assert.equal((await first.post(create.action, { ...create.fields, username: 'erin' })).status, 303);
    const local = (await f.rp.gh.storage.users.findByUsername('erin'))!;

    const store = f.rp.gh.console;
    await store.setLocked(local.id, Date.now());
    const locked = await signInThroughProvider(f, new Agent(f.rp.url), new Agent(f.provider.url), erin);
    assert.equal(locked.status, 403);
    assert.match(await locked.text(), /locked/);

    await store.setLocked(local.id, null);
    const open = await signInThroughProvider(f, new Agent(f.rp.url), new Agent(f.provider.url), erin, '/again');
    assert.equal(open.status, 303);
    assert.equal(open.headers.get('location'), '/again');
  });
});
