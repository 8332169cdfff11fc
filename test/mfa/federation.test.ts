import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashBotToken, newAccountId, newBotToken } from '../../src/core/bot/token.js';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { BOT, linkedPerson, type LinkedPerson } from '../device/support.js';
import { signInThroughProvider, startFederated, type Federated } from '../federation/support.js';
import { enrolTotp, formFor, stepNow, totpCode, turnOnChatApproval } from './support.js';


/**
 * A sign-in through a third-party provider vouches for the first factor
 * only: an account with a second factor here gets the second step after it,
 * as after the password (Keycloak applies its own after a brokered login).
 * `rp` is a Gatehouse signing in through another Gatehouse (`provider`),
 * with its own notification bot for approval in chat.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`second factor after a third-party sign-in (${kind})`, { skip }, () => {
    let f: Federated;
    let erin: LinkedPerson;
    let secret: string;
    let usedStep: number;
    const upstream = { username: 'erin', password: '' };
    const providerAgent = () => new Agent(f.provider.url);

    before(async () => {
      const id = newAccountId();
      const token = newBotToken(id);
      f = await startFederated({ db: kind, rpEnv: { GATEHOUSE_NOTIFY_BOT_TOKEN: token, GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
      const ops = await f.rp.createUser('ops');
      await f.rp.gh.botStorage.bots.create({ id, username: BOT, name: 'Gatehouse alerts', ownerUserId: ops.id, tokenHash: hashBotToken(token), createdAt: Date.now() });
      // Erin's account here, her chat linked (her chat token comes before the second factor ends the password grant for her).
      erin = await linkedPerson(f.rp, 'erin');
      upstream.password = (await f.provider.createUser('erin')).password;
      // Her account elsewhere linked to this one with her password (before it has a factor: linking then needs more than the password).
      const rpAgent = new Agent(f.rp.url);
      assert.equal((await signInThroughProvider(f, rpAgent, providerAgent(), upstream)).headers.get('location'), '/federation/continue');
      const html = await (await rpAgent.get('/federation/continue')).text();
      // The page's second form: link an account you already have.
      const linkForm = parseForm(html.slice(html.indexOf('<h2 class="list-title">Or use an account')));
      assert.equal(linkForm.fields.action, 'link');
      const linked = await rpAgent.post(linkForm.action, { ...linkForm.fields, username: 'erin', password: erin.user.password });
      assert.equal(linked.status, 303, await linked.text());
      ({ secret, usedStep } = await enrolTotp(erin.browser));
    });
    after(() => f?.close());

    it('with an authenticator app: the provider\'s answer leads to the second step, no session until a code passes', async () => {
      const rpAgent = new Agent(f.rp.url);
      const back = await signInThroughProvider(f, rpAgent, providerAgent(), upstream, '/?after=federation');
      assert.equal(back.status, 303);
      assert.equal(back.headers.get('location'), '/login/second-step');
      assert.equal(rpAgent.cookie('gh_session'), undefined, 'no session before the second step');
      assert.equal((await rpAgent.get('/account')).status === 200, false, 'not signed in');
      const page = await (await rpAgent.get('/login/second-step')).text();
      const form = formFor(page, '/login/second-step');
      const wrong = await rpAgent.post('/login/second-step', { ...form, code: '000000' === totpCode(secret, stepNow()) ? '111111' : '000000' });
      assert.equal(wrong.status, 401);
      assert.equal(rpAgent.cookie('gh_session'), undefined);
      const done = await rpAgent.post('/login/second-step', { ...form, code: totpCode(secret, Math.max(stepNow(), usedStep + 1)) });
      assert.equal(done.status, 303);
      assert.equal(done.headers.get('location'), '/?after=federation');
      assert.ok(rpAgent.cookie('gh_session'));
      assert.match(await (await rpAgent.get('/')).text(), /Signed in as <strong>erin<\/strong>/);
    });

    it('with approval in chat: the number is shown and the right press in her chat completes the sign-in', async () => {
      await turnOnChatApproval(erin.browser, erin.chat, BOT);
      const last = (await erin.chat.messages(BOT)).at(-1)?.message_id ?? 0;
      const rpAgent = new Agent(f.rp.url);
      const back = await signInThroughProvider(f, rpAgent, providerAgent(), upstream, '/after');
      assert.equal(back.headers.get('location'), '/login/second-step');
      const step = await (await rpAgent.get('/login/second-step')).text();
      const number = /id="approval-number">(\d+)</.exec(step)?.[1];
      assert.ok(number, step);
      const asks = await erin.chat.replies(BOT, last, 1);
      const msg = asks.find((m) => /tap the number you see/.test(m.text));
      assert.ok(msg, asks.map((m) => m.text).join('\n'));
      const rows = (msg.reply_markup as unknown as { inline_keyboard: { text: string; callback_data: string }[][] }).inline_keyboard;
      const data = rows[0]!.find((b) => b.text === number)!.callback_data;
      const waiting = rpAgent.get('/login/second-step/wait').then(async (r) => ((await r.json()) as { state: string }).state);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal((await erin.chat.press(BOT, msg.message_id, data)).status, 200);
      assert.equal(await waiting, 'approved');
      const done = await rpAgent.post('/login/second-step/approved', formFor(step, '/login/second-step/approved'));
      assert.equal(done.status, 303);
      assert.equal(done.headers.get('location'), '/after');
      assert.ok(rpAgent.cookie('gh_session'));
    });

    // Issue 24, finding 1: approval in chat on its own made no third-party sign-in wait.
    it('with approval in chat as the only factor: the provider\'s answer waits for the tap too', async () => {
      const gina = await linkedPerson(f.rp, 'gina');
      const up = { username: 'gina', password: (await f.provider.createUser('gina')).password };
      const first = new Agent(f.rp.url);
      assert.equal((await signInThroughProvider(f, first, providerAgent(), up)).headers.get('location'), '/federation/continue');
      const html = await (await first.get('/federation/continue')).text();
      const linkForm = parseForm(html.slice(html.indexOf('<h2 class="list-title">Or use an account')));
      assert.equal((await first.post(linkForm.action, { ...linkForm.fields, username: 'gina', password: gina.user.password })).status, 303);
      await turnOnChatApproval(gina.browser, gina.chat, BOT);
      const last = (await gina.chat.messages(BOT)).at(-1)?.message_id ?? 0;
      const rpAgent = new Agent(f.rp.url);
      const back = await signInThroughProvider(f, rpAgent, providerAgent(), up, '/g');
      assert.equal(back.headers.get('location'), '/login/second-step');
      assert.equal(rpAgent.cookie('gh_session'), undefined, 'no session before the tap');
      const step = await (await rpAgent.get('/login/second-step')).text();
      const number = /id="approval-number">(\d+)</.exec(step)?.[1];
      assert.ok(number, step);
      const msg = (await gina.chat.replies(BOT, last, 1)).find((m) => /tap the number you see/.test(m.text));
      assert.ok(msg);
      const rows = (msg.reply_markup as unknown as { inline_keyboard: { text: string; callback_data: string }[][] }).inline_keyboard;
      assert.equal((await gina.chat.press(BOT, msg.message_id, rows[0]!.find((b) => b.text === number)!.callback_data)).status, 200);
      const done = await rpAgent.post('/login/second-step/approved', formFor(step, '/login/second-step/approved'));
      assert.deepEqual([done.status, done.headers.get('location')], [303, '/g']);
      assert.ok(rpAgent.cookie('gh_session'));
    });

    it('an account without a factor still signs straight in through the provider', async () => {
      const fay = await f.provider.createUser('fay');
      const rpAgent = new Agent(f.rp.url);
      await signInThroughProvider(f, rpAgent, providerAgent(), fay);
      const create = parseForm(await (await rpAgent.get('/federation/continue')).text());
      assert.equal((await rpAgent.post(create.action, { ...create.fields, username: 'fay' })).status, 303);
      const again = new Agent(f.rp.url);
      const back = await signInThroughProvider(f, again, providerAgent(), fay, '/x');
      assert.deepEqual([back.status, back.headers.get('location')], [303, '/x']);
      assert.ok(again.cookie('gh_session'));
    });
  });
}
