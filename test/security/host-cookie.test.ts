/**
 * Session fixation by cookie tossing: under https the session and login-CSRF
 * cookies are `__Host-` prefixed (RFC 6265bis §4.1.3.2: Secure, Path=/, no
 * Domain), so a sibling subdomain or a plain-http response cannot set them;
 * a cookie of the plain name is not read. Over plain http the prefix would be
 * refused by browsers, so the plain names stay. Guards
 * src/http/auth/session-cookie.ts (originCookie).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseForm } from '../helpers/agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { certDir, httpsCall, type CertDir } from '../mtls/support.js';
import { FORM } from './support.js';

const setCookies = (headers: Record<string, string | string[] | undefined>) => [headers['set-cookie'] ?? []].flat();
const valueOf = (line: string) => /^[^=]+=([^;]*)/.exec(line)![1]!;

describe('session cookie under https', () => {
  let certs: CertDir;
  let server: TestServer;
  let ca: string;
  before(async () => {
    certs = certDir();
    const cert = certs.make('gatehouse', { ip: '127.0.0.1' });
    server = await startServer({ env: { GATEHOUSE_TLS_CERT: cert.certPath, GATEHOUSE_TLS_KEY: cert.keyPath } });
    ca = cert.cert;
    await server.createUser('hana');
  });
  after(async () => {
    await server?.close();
    certs?.cleanup();
  });

  /** Signs in over https; returns the Set-Cookie lines of the login page and of the sign-in. */
  async function signIn() {
    const page = await httpsCall(`${server.url}/login`, { ca });
    const csrfLine = setCookies(page.headers).find((c) => c.startsWith('__Host-gh_csrf='));
    assert.ok(csrfLine, `login CSRF cookie: ${JSON.stringify(page.headers['set-cookie'])}`);
    const { fields } = parseForm(String(page.body.text));
    const done = await httpsCall(`${server.url}/login`, {
      ca,
      headers: { cookie: `__Host-gh_csrf=${valueOf(csrfLine)}` },
      form: { ...fields, username: 'hana', password: 'correct horse battery staple', return_to: '/' },
    });
    assert.equal(done.status, 303, JSON.stringify(done.body).slice(0, 200));
    return { csrfLine, sessionLines: setCookies(done.headers) };
  }

  it('sets __Host-gh_session and __Host-gh_csrf: Secure, Path=/, no Domain', async () => {
    const { csrfLine, sessionLines } = await signIn();
    const session = sessionLines.find((c) => c.startsWith('__Host-gh_session='));
    assert.ok(session, `session cookie: ${JSON.stringify(sessionLines)}`);
    assert.ok(!sessionLines.some((c) => c.startsWith('gh_session=')), 'no cookie of the plain name');
    for (const line of [session, csrfLine]) {
      assert.match(line, /; Secure/i);
      assert.match(line, /; Path=\/(;|$)/i);
      assert.match(line, /; HttpOnly/i);
      assert.doesNotMatch(line, /; Domain=/i);
    }
  });

  it('reads only the prefixed name: a tossed gh_session cookie is no session', async () => {
    const { sessionLines } = await signIn();
    const id = valueOf(sessionLines.find((c) => c.startsWith('__Host-gh_session='))!);
    const home = (cookie: string) => httpsCall(`${server.url}/`, { ca, headers: { cookie } });
    assert.match(String((await home(`__Host-gh_session=${id}`)).body.text), /signed in as <strong>hana<\/strong>/i);
    assert.doesNotMatch(String((await home(`gh_session=${id}`)).body.text), /signed in as/i);
  });
});

describe('session cookie over plain http', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.createUser('ines');
  });
  after(() => server.close());

  it('keeps the plain names gh_session and gh_csrf (browsers refuse __Host- without https)', async () => {
    const page = await fetch(`${server.url}/login`);
    const csrfLine = page.headers.getSetCookie().find((c) => c.startsWith('gh_csrf='));
    assert.ok(csrfLine);
    const { fields } = parseForm(await page.text());
    const res = await fetch(`${server.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': FORM, cookie: `gh_csrf=${valueOf(csrfLine)}` },
      body: new URLSearchParams({ ...fields, username: 'ines', password: 'correct horse battery staple', return_to: '/' }),
    });
    assert.equal(res.status, 303);
    const lines = res.headers.getSetCookie();
    assert.ok(lines.some((c) => c.startsWith('gh_session=')), JSON.stringify(lines));
    assert.ok(!lines.some((c) => c.startsWith('__Host-')));
    assert.doesNotMatch(lines.join('\n'), /; Secure/i);
  });
});
