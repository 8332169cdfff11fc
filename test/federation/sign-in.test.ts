import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { PROVIDER_ID, signInThroughProvider, startFederated, type Federated } from './support.js';

/**
 * Third-party login against a second Gatehouse acting as the provider, in
 * both configured shapes: the GitHub preset and a generic OAuth 2.0 provider.
 */
for (const { kind, skip } of await databaseKinds()) {
  for (const type of ['github', 'oauth2'] as const) {
    describe(`sign in through another provider (${type}, ${kind})`, { skip }, () => {
      let f: Federated;
      before(async () => {
        f = await startFederated({ db: kind, type });
      });
      after(() => f?.close());

      it('first sign-in creates a local account; the next one signs straight in', async () => {
        const bob = await f.provider.createUser('bob');
        const rpAgent = new Agent(f.rp.url);
        const providerAgent = new Agent(f.provider.url);
        const back = await signInThroughProvider(f, rpAgent, providerAgent, bob, '/?after=federation');
        assert.equal(back.status, 303);
        assert.equal(back.headers.get('location'), '/federation/continue');

        const page = await rpAgent.get('/federation/continue');
        assert.equal(page.status, 200);
        const html = await page.text();
        assert.match(html, /You signed in with <strong>Elsewhere<\/strong> as <strong>bob<\/strong>/);
        const create = parseForm(html);
        assert.equal(create.fields.action, 'create');
        const done = await rpAgent.post(create.action, { ...create.fields, username: 'bob' });
        assert.equal(done.status, 303);
        assert.equal(done.headers.get('location'), '/?after=federation');
        assert.match(await (await rpAgent.get('/')).text(), /Signed in as <strong>bob<\/strong>/);

        const local = await f.rp.gh.storage.users.findByUsername('bob');
        assert.ok(local);
        assert.equal(local.email, 'bob@example.test');
        const link = await f.rp.gh.federationStorage.identities.find(PROVIDER_ID, 'bob');
        assert.equal(link?.userId, local.id);
        // Such an account has no password here: the password form never lets anyone in.
        assert.equal((await f.rp.gh.login.attempt('bob', '!federated', '192.0.2.1')).ok, false);

        // A new browser session at rp; the provider remembers the person and the consent.
        const again = new Agent(f.rp.url);
        const second = await signInThroughProvider(f, again, providerAgent, bob, '/somewhere');
        assert.equal(second.status, 303);
        assert.equal(second.headers.get('location'), '/somewhere');
        assert.match(await (await again.get('/')).text(), /Signed in as <strong>bob<\/strong>/);
      });

      it('a taken username is never reused: the page suggests a free one and refuses the taken one', async () => {
        await f.rp.createUser('dave');
        const dave = await f.provider.createUser('dave');
        const rpAgent = new Agent(f.rp.url);
        await signInThroughProvider(f, rpAgent, new Agent(f.provider.url), dave);
        const form = parseForm(await (await rpAgent.get('/federation/continue')).text());
        assert.match(await (await rpAgent.get('/federation/continue')).text(), /value="dave-2"/);
        const taken = await rpAgent.post(form.action, { ...form.fields, username: 'DAVE' });
        assert.equal(taken.status, 409);
        assert.match(await taken.text(), /The username DAVE is taken/);
        const bad = await rpAgent.post(form.action, { ...form.fields, username: '../etc' });
        assert.equal(bad.status, 400);
        const ok = await rpAgent.post(form.action, { ...form.fields, username: 'dave-2' });
        assert.equal(ok.status, 303);
        const created = await f.rp.gh.storage.users.findByUsername('dave-2');
        assert.equal((await f.rp.gh.federationStorage.identities.find(PROVIDER_ID, 'dave'))?.userId, created?.id);
      });
    });
  }
}
