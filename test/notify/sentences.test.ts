import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chatText } from '../../src/core/notify/chat.js';
import { EVENT_CATALOGUE, PERSONAL_EVENT_TYPES, newEvent, type EventPayloads, type EventType } from '../../src/core/notify/events.js';
import { oneTapButtons } from '../../src/core/notify/one-tap.js';
import { hasSentence } from '../../src/core/notify/sentences.js';
import { recordEvent } from '../../src/core/notify/record.js';
import { issueCode, REDIRECT } from '../helpers/authorize.js';
import { databaseKinds } from '../helpers/db.js';
import { BOT, buttonsOf, lastId, linkedPerson, nextMessage, postForm, startChatServer, type ChatServer, type LinkedPerson } from '../device/support.js';

/*
 * Every event a person may receive in their linked chat reads as a sentence
 * in their words (src/core/notify/sentences.ts). A personal event added to
 * the catalogue without a sentence fails here, and so does one without a
 * sample below (add one: the checks then read what it says).
 */

const USER = 'usr_01JD0000000000000000000000';
const CLIENT = 'cli_7f3a9c2e5b1d4e6f8a0b';
const FAMILY = 'fam_5c1e9a7d3b2f4e60';
const APPROVAL = 'apr_01JD000000000000000000ZZZZ';

/** One payload per event a person may be sent (every personal one at least), with ids a sentence must not show. */
const SAMPLES: { [T in EventType]?: EventPayloads[T][] } = {
  'user.login.succeeded': [
    { user_id: USER, username: 'alice', ip: '203.0.113.7', sid: 'sid_0123456789abcdef' },
    { user_id: USER, username: 'alice', ip: '203.0.113.7', sid: null },
  ],
  'user.locked': (['account', 'address', 'not_me', 'one_tap', 'admin', 'cli'] as const).map((by) => ({ user_id: USER, username: 'alice', ip: '203.0.113.7', locked_by: by })),
  'user.unlocked': (['admin', 'cli', 'password_reset'] as const).map((by) => ({ user_id: USER, username: 'alice', ip: '203.0.113.7', unlocked_by: by })),
  'user.email_verified': [{ user_id: USER, username: 'alice', email: 'alice@example.test', ip: '203.0.113.7' }, { user_id: USER, username: 'alice', email: 'alice@example.test', ip: '' }],
  'user.password_changed': (['self', 'reset', 'admin', 'cli'] as const).map((by) => ({ user_id: USER, username: 'alice', ip: by === 'cli' ? '' : '203.0.113.7', changed_by: by })),
  'user.updated': (['admin', 'self'] as const).map((by) => ({ user_id: USER, username: 'alice', fields: ['name', 'email'], ip: '203.0.113.7', updated_by: by })),
  'mfa.enrolled': [
    ...(['totp', 'recovery_codes', 'chat_approval'] as const).map((factor) => ({ user_id: USER, factor })),
    { user_id: USER, factor: 'passkey', passkey_name: 'Work laptop' },
  ],
  'mfa.removed': [{ user_id: USER, factor: 'totp' }, { user_id: USER, factor: 'passkey', passkey_name: 'Old phone' }],
  'consent.granted': [{ user_id: USER, client_id: CLIENT, client_name: 'Photo printer', scope: ['openid', 'profile', 'email'] }],
  'consent.denied': [{ user_id: USER, client_id: CLIENT, client_name: 'Photo printer', scope: ['user'] }],
  'device.approved': [{ user_id: USER, client_id: CLIENT, client_name: 'Living-room TV', scope: ['user', 'offline_access'] }],
  'device.denied': [{ user_id: USER, client_id: CLIENT, client_name: 'Living-room TV', scope: [] }],
  'ciba.approved': [
    { user_id: USER, client_id: CLIENT, client_name: 'Bank', scope: ['openid'], binding_message: 'Pay 20 EUR' },
    { user_id: USER, client_id: CLIENT, client_name: 'Bank', scope: ['openid', 'payments'], binding_message: null },
  ],
  'ciba.denied': [{ user_id: USER, client_id: CLIENT, client_name: 'Bank', scope: ['openid'], binding_message: null }],
  'refresh_token.reuse_detected': [{ client_id: CLIENT, user_id: USER, family_id: FAMILY }],
  'authorization_code.reuse_detected': [{ client_id: CLIENT, user_id: USER, family_id: FAMILY }],
  'signin.approval.approved': [{ user_id: USER, approval_id: APPROVAL, ip: '203.0.113.7' }],
};

// Before any describe: a suite declared before a top-level await would end the run without the later ones.
const kinds = await databaseKinds();

const IDS = [USER, CLIENT, FAMILY, APPROVAL, 'sid_0123456789abcdef'];

/** What the person's chat would show: the sentence with the names the worker looks up and the buttons sent along. */
function render(type: string, data: object): { text: string; buttons: string[] } {
  const e = newEvent(type as EventType, data as never, Date.UTC(2026, 10, 28, 23, 34, 5));
  const buttons = (oneTapButtons(e) ?? []).flat().map((b) => b.text);
  return { text: chatText(e, { clientName: 'Photo printer', buttons }), buttons };
}

describe('chat sentences for personal events', () => {
  it('the catalogue has personal events, and each has a sentence and a sample here', () => {
    assert.ok(PERSONAL_EVENT_TYPES.length >= 8);
    const missing = PERSONAL_EVENT_TYPES.filter((t) => !hasSentence(t));
    assert.deepEqual(missing, [], `personal events without a sentence in src/core/notify/sentences.ts: ${missing.join(', ')}`);
    const unsampled = PERSONAL_EVENT_TYPES.filter((t) => !SAMPLES[t]?.length);
    assert.deepEqual(unsampled, [], `personal events without a sample in test/notify/sentences.test.ts: ${unsampled.join(', ')}`);
  });

  for (const type of Object.keys(SAMPLES).filter((t) => Object.hasOwn(EVENT_CATALOGUE, t))) {
    it(`${type}: a sentence, no JSON, no ids, no event type`, () => {
      for (const data of SAMPLES[type as EventType]!) {
        const { text } = render(type, data);
        assert.doesNotMatch(text, /[{}]|"\w+":/, text);
        assert.ok(!text.includes(type), `the type shows: ${text}`);
        for (const id of IDS) assert.ok(!text.includes(id), `an id shows: ${text}`);
        assert.doesNotMatch(text, /\b(user_id|client_id|family_id|locked_by|undefined|null)\b/, text);
        assert.match(text, /^[A-Z“]/, text);
        assert.match(text, /2026-11-28 23:34 UTC/, text);
      }
    });
  }

  it('a new sign-in no longer says to change a password; it points at what the person can do', () => {
    for (const data of SAMPLES['user.login.succeeded']!) {
      const { text, buttons } = render('user.login.succeeded', data);
      assert.doesNotMatch(text, /password/i, text);
      assert.match(text, /^New sign-in to your account alice from 203\.0\.113\.7/);
      assert.match(text, /If this wasn't you, .*lock your account|If this wasn't you, tap “.*Lock/i, text);
      // Only a button that is there is named.
      for (const [, label] of text.matchAll(/tap “([^”]+)”/g)) assert.ok(buttons.includes(label!), `${label} is not a button: ${buttons.join(', ')}`);
    }
    assert.deepEqual(render('user.login.succeeded', SAMPLES['user.login.succeeded']![0]!).buttons.length > 0, true);
  });

  it('names the app and the factor in the person\'s words', () => {
    assert.match(render('refresh_token.reuse_detected', SAMPLES['refresh_token.reuse_detected']![0]!).text, /“Photo printer”/);
    assert.match(render('consent.granted', SAMPLES['consent.granted']![0]!).text, /You granted “Photo printer” access to your account: it may see your name and see your e-mail address/);
    assert.match(render('mfa.enrolled', { user_id: USER, factor: 'passkey', passkey_name: 'Work laptop' }).text, /You added the passkey “Work laptop” as a second factor/);
    assert.match(render('mfa.enrolled', { user_id: USER, factor: 'totp' }).text, /an authenticator app/);
    const e = newEvent('refresh_token.reuse_detected', SAMPLES['refresh_token.reuse_detected']![0]!, Date.now());
    assert.match(chatText(e), /“an app”/, 'without a name looked up, no id either');
  });
});

for (const { kind, skip } of kinds) {
  describe(`sentences reach the linked chat (${kind})`, { skip, timeout: 60_000 }, () => {
    let server: ChatServer;
    let hana: LinkedPerson;
    before(async () => {
      server = await startChatServer(kind);
      hana = await linkedPerson(server, 'hana');
    });
    after(() => server.close());

    it('mfa.enrolled arrives as a sentence, not JSON', async () => {
      const seen = await lastId(hana.chat);
      await recordEvent(server.gh.storage, 'mfa.enrolled', { user_id: hana.user.id, factor: 'passkey', passkey_name: 'Hana’s phone' }, Date.now());
      const m = await nextMessage(hana.chat, seen, /second factor/);
      assert.match(m.text, /^You added the passkey “Hana’s phone” as a second factor on \d{4}-\d\d-\d\d \d\d:\d\d UTC\./);
      assert.doesNotMatch(m.text, /[{}]|mfa\.enrolled|usr_/);
    });

    it('a replayed refresh token names the app (looked up by the worker) and offers the lock', async () => {
      const app = await server.createClient({ name: 'Photo printer', grantTypes: ['authorization_code', 'refresh_token'], scope: 'user' });
      const { code, verifier } = await issueCode(hana.browser, app.id);
      const tokenUrl = `${server.url}/oauth/token`;
      const first = await postForm(tokenUrl, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, app);
      const rt = (first.body as { refresh_token: string }).refresh_token;
      assert.equal((await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: rt }, app)).status, 200);
      const seen = await lastId(hana.chat);
      await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: rt }, app);
      const m = await nextMessage(hana.chat, seen, /Warning/);
      assert.match(m.text, /your sign-in to “Photo printer” was replayed from somewhere else/);
      assert.ok(!m.text.includes(app.id), m.text);
      assert.ok(buttonsOf(m).some((b) => /Lock my account/.test(b.text)));
      assert.match(m.text, /tap “Lock my account”/);
    });

    it('the sign-in alert says what to do without a password to change', async () => {
      const seen = await lastId(hana.chat);
      const { Agent } = await import('../helpers/agent.js');
      assert.equal((await new Agent(server.url).login('hana', hana.user.password)).status, 303);
      const m = await nextMessage(hana.chat, seen, /New sign-in/);
      assert.doesNotMatch(m.text, /password/i);
      assert.match(m.text, /If this wasn't you/);
      assert.equal(BOT.length > 0, true);
    });
  });
}
