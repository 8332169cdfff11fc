/**
 * Where the server will send a browser: redirect URIs compared as exact
 * strings, only a loopback port may vary (RFC 9700 §2.1, §4.1; RFC 8252
 * §7.3); a bound domain at registration; and return_to never leaves the
 * server (RFC 9700 §4.11, no open redirector).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { pkce } from '../helpers/authorize.js';
import { signedIn } from '../helpers/people.js';
import { REDIRECT, expectErrorPage, formBody, post } from './support.js';

const LOOPBACK = 'http://127.0.0.1/cb';

describe('redirect URIs', () => {
  let server: TestServer;
  let app: { id: string; secret: string | undefined };
  let native: { id: string; secret: string | undefined };
  let agent: Agent;
  const request = (clientId: string, redirectUri: string) =>
    formBody({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'st', code_challenge: pkce().challenge, code_challenge_method: 'S256' });

  before(async () => {
    server = await startServer();
    app = await server.createClient({ redirectUris: [REDIRECT], trusted: true });
    native = await server.createClient({ redirectUris: [LOOPBACK], public: true, trusted: true });
    agent = await signedIn(server, 'judy');
  });
  after(() => server.close());

  it('the registered URI itself is accepted (the control for the cases below)', async () => {
    const res = await agent.get(`/oauth2?${request(app.id, REDIRECT)}`);
    assert.equal(res.status, 302);
    assert.ok(res.headers.get('location')!.startsWith(`${REDIRECT}?code=`));
  });

  // Guards the exact comparison in src/core/oauth/redirect-uri.ts `redirectUriMatches`
  // (`registered.includes(requested)`) and the fatal error page for an unregistered
  // URI in src/core/oauth/authorize.ts `validate`: any fuzzy match would redirect here.
  const variants: [name: string, uri: string][] = [
    ['prefix of the path', 'https://app.example.test/callbac'],
    ['parent path', 'https://app.example.test/'],
    ['trailing slash', `${REDIRECT}/`],
    ['longer path', `${REDIRECT}x`],
    ['sub-path', `${REDIRECT}/evil`],
    ['dot segments', `${REDIRECT}/../callback`],
    ['upper-case host', 'https://APP.example.test/callback'],
    ['upper-case path', 'https://app.example.test/Callback'],
    ['upper-case scheme', 'HTTPS://app.example.test/callback'],
    ['extra query', `${REDIRECT}?next=https://evil.example`],
    ['empty query', `${REDIRECT}?`],
    ['fragment', `${REDIRECT}#x`],
    ['empty fragment', `${REDIRECT}#`],
    ['explicit default port', 'https://app.example.test:443/callback'],
    ['another port (only loopback ports may vary)', 'https://app.example.test:8443/callback'],
    ['http instead of https', 'http://app.example.test/callback'],
    ['host as userinfo', 'https://app.example.test@evil.example/callback'],
    ['host suffix', 'https://app.example.test.evil.example/callback'],
    ['percent-encoded path', 'https://app.example.test/%63allback'],
    ['trailing space', `${REDIRECT} `],
    ['backslash', 'https://app.example.test\\@evil.example/callback'],
  ];
  for (const [name, uri] of variants) {
    it(`rejects ${name} with an error page, not a redirect`, async () => {
      const res = await agent.get(`/oauth2?${request(app.id, uri)}`);
      const page = await expectErrorPage(res, 400);
      assert.doesNotMatch(page, /evil\.example"/);
    });
  }

  // Guards the port-only exception in src/core/oauth/redirect-uri.ts (RFC 8252 §7.3).
  it('lets the port of a registered loopback URI vary, and the code is bound to the URI as sent', async () => {
    const { verifier, challenge } = pkce();
    const sent = 'http://127.0.0.1:51234/cb';
    const res = await agent.get(`/oauth2?${formBody({ response_type: 'code', client_id: native.id, redirect_uri: sent, code_challenge: challenge, code_challenge_method: 'S256' })}`);
    assert.equal(res.status, 302);
    const back = new URL(res.headers.get('location')!);
    assert.equal(`${back.origin}${back.pathname}`, sent);
    const token = await post(server.url, '/oauth/token', { grant_type: 'authorization_code', client_id: native.id, code: back.searchParams.get('code')!, code_verifier: verifier, redirect_uri: sent });
    assert.equal(token.status, 200);
  });

  // Guards the `r.href !== requested` check in src/core/oauth/redirect-uri.ts: the
  // URL parser drops whitespace and resolves dot segments, so without it these
  // matched, and raw control characters reached the Location header (a 500).
  const loopbackVariants: [name: string, uri: string][] = [
    ['another path', 'http://127.0.0.1:51234/cb/x'],
    ['another case', 'http://127.0.0.1:51234/CB'],
    ['a query', 'http://127.0.0.1:51234/cb?x=1'],
    ['a fragment', 'http://127.0.0.1:51234/cb#x'],
    ['dot segments', 'http://127.0.0.1:51234/x/../cb'],
    ['leading space', ' http://127.0.0.1:51234/cb'],
    ['a line break', 'http://127.0.0.1:51234/c\r\nb'],
    ['a tab', 'http://127.0.0.1:51234/c\tb'],
    ['another loopback name', 'http://localhost:51234/cb'],
    ['https', 'https://127.0.0.1:51234/cb'],
    ['a non-loopback host', 'http://127.0.0.2:51234/cb'],
    // Guards the userinfo refusal in `redirectUriMatches`: the parser kept it out of the
    // comparison, so the browser went to evil@127.0.0.1 with the code.
    ['userinfo and another port', 'http://evil@127.0.0.1:4444/cb'],
    ['userinfo and the same port', 'http://evil@127.0.0.1/cb'],
    ['user and password', 'http://evil:pw@127.0.0.1:4444/cb'],
    ['an empty password', 'http://evil:@127.0.0.1:4444/cb'],
  ];
  for (const [name, uri] of loopbackVariants) {
    it(`rejects a loopback URI with ${name}`, async () => {
      for (const responseType of ['code', 'token']) {
        const q = formBody({ response_type: responseType, client_id: native.id, redirect_uri: uri, code_challenge: pkce().challenge, code_challenge_method: 'S256' });
        await expectErrorPage(await agent.get(`/oauth2?${q}`), 400);
      }
    });
  }

  // Guards `portMayVary` and the IP-literal rule in `redirectUriMatches` (RFC 8252 §7.3, §8.3):
  // only a native (public) client's loopback IP literal may change its port.
  it('the port varies only for a native client, and only on an IP literal, not localhost', async () => {
    const confidential = await server.createClient({ redirectUris: [LOOPBACK], trusted: true });
    const nativeV6 = await server.createClient({ redirectUris: ['http://[::1]/cb'], public: true, trusted: true });
    const nativeName = await server.createClient({ redirectUris: ['http://localhost/cb'], public: true, trusted: true });
    const code = (res: Response) => {
      assert.equal(res.status, 302);
      return new URL(res.headers.get('location')!);
    };
    assert.equal(code(await agent.get(`/oauth2?${request(confidential.id, LOOPBACK)}`)).host, '127.0.0.1');
    await expectErrorPage(await agent.get(`/oauth2?${request(confidential.id, 'http://127.0.0.1:4444/cb')}`), 400);
    assert.equal(code(await agent.get(`/oauth2?${request(nativeV6.id, 'http://[::1]:4444/cb')}`)).host, '[::1]:4444');
    assert.equal(code(await agent.get(`/oauth2?${request(nativeName.id, 'http://localhost/cb')}`)).host, 'localhost');
    await expectErrorPage(await agent.get(`/oauth2?${request(nativeName.id, 'http://localhost:4444/cb')}`), 400);
  });

  // Guards the bound-domain check in src/core/oauth/redirect-uri.ts `redirectUriProblem`.
  it('a client bound to a domain cannot register a redirect URI outside it', async () => {
    for (const uri of ['https://evil.example/cb', 'https://example.com.evil.example/cb', 'https://notexample.com/cb', 'com.example.app:/cb', 'http://127.0.0.1/cb']) {
      await assert.rejects(server.createClient({ domain: 'example.com', redirectUris: [uri] }), /bound domain/, uri);
    }
    for (const uri of ['https://example.com/cb', 'https://app.example.com/cb']) {
      await server.createClient({ domain: 'https://example.com', redirectUris: [uri] });
    }
  });

  it('registration refuses redirect URIs with whitespace or control characters', async () => {
    for (const uri of ['https://app.example/c\r\nb', 'https://app.example/cb ', 'https://app.example/c\tb']) {
      await assert.rejects(server.createClient({ redirectUris: [uri] }), /spaces or control characters/);
    }
  });
});

describe('return_to after sign-in and sign-out', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.createUser('mallory-victim');
  });
  after(() => server.close());

  /** Where a Location header sends a browser, read the way browsers read it (`\` is `/`). */
  const sameOrigin = (location: string) => {
    assert.ok(location.startsWith('/') && !/^[/\\]{2}/.test(location.replace(/\\/g, '/')), `Location ${location}`);
    assert.equal(new URL(location, server.url).origin, server.url);
  };

  // Guards src/http/auth/session-cookie.ts `safeReturnTo`, including the final
  // `//` check: dot segments collapse `/.//evil.example` into `//evil.example`.
  const hostile = [
    '//evil.example', 'https://evil.example', '/\\evil.example', '\\\\evil.example', '\\/evil.example', 'javascript:alert(1)',
    '///evil.example', '/\t/evil.example', 'http:evil.example', ' //evil.example', '/.//evil.example', '/..//evil.example',
    '/%2e//evil.example', '/a/..//evil.example', 'data:text/html,<script>alert(1)</script>', '//evil.example/%2F..',
  ];
  for (const target of hostile) {
    it(`return_to=${JSON.stringify(target)} stays on this server`, async () => {
      const agent = new Agent(server.url);
      const page = await agent.get(`/login?return_to=${encodeURIComponent(target)}`);
      const form = parseForm(await page.text());
      sameOrigin(form.fields.return_to!);
      const res = await agent.post('/login', { ...form.fields, return_to: target, username: 'mallory-victim', password: 'correct horse battery staple' });
      assert.equal(res.status, 303);
      sameOrigin(res.headers.get('location')!);

      const out = await fetch(`${server.url}/logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: formBody({ return_to: target }), redirect: 'manual' });
      sameOrigin(out.headers.get('location')!);
    });
  }

  it('a path on this server is kept', async () => {
    const agent = new Agent(server.url);
    const res = await agent.login('mallory-victim', 'correct horse battery staple', '/oauth2?client_id=x&state=y');
    assert.equal(res.headers.get('location'), '/oauth2?client_id=x&state=y');
  });
});
