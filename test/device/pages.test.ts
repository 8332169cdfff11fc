import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { signedIn, type SignedIn } from '../helpers/people.js';
import { DEVICE_GRANT_TYPE } from '../../src/core/oauth/device.js';
import { postForm, startChatServer, type ChatServer } from './support.js';

/*
 * Issue 27 item 6: the device page's code field and its consent page
 * (RFC 8628 §5.4), the 404 page, the bot port's answer to a browser, the
 * home page.
 */
const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

for (const { kind, skip } of await databaseKinds()) {
  describe(`pages a person finds on their own (${kind})`, { skip }, () => {
    let server: ChatServer;
    let alice: SignedIn;
    let root: SignedIn;
    let tv: { id: string; secret: string | undefined };

    before(async () => {
      server = await startChatServer(kind);
      alice = await signedIn(server, 'alice');
      root = await signedIn(server, 'root');
      await server.gh.console.setAdmin(root.user.id, true);
      tv = await server.createClient({ name: 'Living-room TV', public: true, grantTypes: [DEVICE_GRANT_TYPE], redirectUris: [], scope: 'openid user' });
    });
    after(() => server.close());

    it('the code field is a styled text field with the format hinted, for one-time codes', async () => {
      const page = await alice.get('/device');
      const body = await page.text();
      const input = /<input id="user_code"[^>]*>/.exec(body)?.[0] ?? '';
      assert.match(input, /type="text"/);
      assert.match(input, /class="code-input"/);
      assert.match(input, /autocomplete="one-time-code"/);
      assert.match(input, /autocapitalize="characters"/);
      assert.match(input, /spellcheck="false"/);
      assert.match(input, /placeholder="XXXX-XXXX"/);
      assert.match(input, /aria-describedby="user_code_hint"/);
      assert.match(body, /<p class="hint" id="user_code_hint">8 letters, shown as XXXX-XXXX/);
      assert.doesNotMatch(body, /<style|style="/, 'no inline style (CSP)');
      // A wrong code: the error joins the hint and marks the field.
      const form = parseForm(body);
      const wrong = await alice.post(form.action, { ...form.fields, user_code: 'BBBB-BBBB' });
      assert.equal(wrong.status, 400);
      const again = /<input id="user_code"[^>]*>/.exec(await wrong.text())?.[0] ?? '';
      assert.match(again, /aria-describedby="user_code_hint user_code_error" aria-invalid="true"/);
      const css = await (await fetch(`${server.url}/assets/gatehouse.css`)).text();
      assert.match(css, /input\.code-input \{/);
    });

    it('the consent page repeats the code, as the device shows it, however it was typed', async () => {
      const r = await postForm(`${server.url}/oauth/device_authorization`, { scope: 'openid user' }, tv);
      const userCode = (r.body as { user_code: string }).user_code;
      const form = parseForm(await (await alice.get('/device')).text());
      const consent = await alice.post(form.action, { ...form.fields, user_code: ` ${userCode.replace('-', '').toLowerCase()} ` });
      assert.equal(consent.status, 200);
      const body = await consent.text();
      assert.match(body, new RegExp(`<div class="device-code"><span class="muted">Code on your device</span><strong class="code">${userCode}</strong>`));
      assert.match(body, /Allow only if your device shows this code/);
      // The authorization code flow's consent page has no code to compare.
      assert.equal(parseForm(body).action, '/device/decision');
    });

    it('a 404 for a browser leads home and does not blame an application', async () => {
      const res = await fetch(`${server.url}/no/such/page`, { headers: HTML });
      assert.equal(res.status, 404);
      const body = await res.text();
      assert.match(body, /<h1>Page not found<\/h1>/);
      assert.match(body, /<a class="button primary" href="\/">Go to the Gatehouse home page<\/a>/);
      assert.doesNotMatch(body, /application sent you here/i);
      // Not a browser: the OAuth error shape stays.
      const api = await fetch(`${server.url}/no/such/page`);
      assert.equal(api.status, 404);
      assert.equal((await api.json() as { error: string }).error, 'invalid_request');
    });

    it('the bot port answers a browser\'s wrong path with a page linking to the chat page; Bot API clients keep their JSON', async () => {
      const bot = server.bot!.url;
      const page = await fetch(`${bot}/no/such/page`, { headers: HTML });
      assert.equal(page.status, 404);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      const body = await page.text();
      assert.match(body, /<a class="button primary" href="\/">Open the chat page<\/a>/);
      assert.match(body, new RegExp(`href="${server.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/">Gatehouse home`));
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      const css = await fetch(`${bot}/assets/gatehouse.css`);
      assert.equal(css.status, 200);
      for (const [path, headers] of [['/no/such/page', {}], ['/botNOTATOKEN/getMe', HTML], ['/file/botNOTATOKEN/x', HTML]] as const) {
        const res = await fetch(`${bot}${path}`, { headers });
        // The Bot API's own answer (404 here, 401 for a token it does not know), never the page.
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/, path);
        const json = await res.json() as { ok: boolean; error_code: number };
        assert.equal(json.ok, false, path);
        assert.equal(json.error_code, res.status, path);
      }
      const post = await fetch(`${bot}/no/such/page`, { method: 'POST', headers: HTML });
      assert.equal((await post.json() as { ok: boolean }).ok, false);
    });

    it('the home page says what Gatehouse is; an administrator gets the console, others do not', async () => {
      const out = await (await fetch(`${server.url}/`)).text();
      assert.match(out, /Gatehouse signs you in to this organisation’s apps/);
      assert.match(out, /href="\/login">Sign in/);
      const person = await (await alice.get('/')).text();
      assert.match(person, /Signed in as <strong>alice<\/strong>/);
      assert.doesNotMatch(person, />Admin console</);
      assert.match(person, /href="\/account">Your account/);
      assert.match(person, new RegExp(`href="${server.bot!.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}">Chat page`));
      const admin = await (await root.get('/')).text();
      assert.match(admin, /<a class="button primary" href="\/admin">Admin console<\/a>/);
    });
  });
}
