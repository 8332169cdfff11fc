/**
 * Hostile input at the token endpoint, both path shapes: every case must get
 * an RFC 6749 §5.2 JSON error with the right status, never a 500. One line a
 * case: name, request built from the fixtures, status, error code.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FORM, basic, expectOAuthError, post, type Fields } from '../security/support.js';

interface Fixtures {
  /** client_id + client_secret of a confidential client_secret_post client allowed every grant. */
  creds: Fields;
  id: string;
  /** The Basic header of a client_secret_basic client allowed every grant. */
  basic: string;
  basicId: string;
  /** A client allowed only authorization_code. */
  narrow: Fields;
}

type Req = { body: Fields | string | Uint8Array; headers?: Record<string, string> };
type Case = [name: string, req: (f: Fixtures) => Req, status: number, error: string];

const long = (n: number) => 'x'.repeat(n);
const b64 = (s: string) => Buffer.from(s).toString('base64');
const cc = (f: Fixtures, extra: Fields = {}): Req => ({ body: { grant_type: 'client_credentials', ...f.creds, ...extra } });
const code = (f: Fixtures, extra: Fields = {}): Req => ({ body: { grant_type: 'authorization_code', code: 'no-such-code', ...f.creds, ...extra } });
const pw = (f: Fixtures, extra: Fields = {}): Req => ({ body: { grant_type: 'password', username: 'nobody', password: 'wrong password', ...f.creds, ...extra } });
const viaBasic = (authorization: string, body: Fields = { grant_type: 'client_credentials' }): Req => ({ body, headers: { authorization } });

const cases: Case[] = [
  // Body shape: only application/x-www-form-urlencoded is a token request (RFC 6749 §3.2).
  ['no body, no content type', () => ({ body: new Uint8Array() }), 400, 'invalid_request'],
  ['empty form', () => ({ body: '', headers: { 'content-type': FORM } }), 400, 'invalid_request'],
  ['JSON body', (f) => ({ body: JSON.stringify({ grant_type: 'client_credentials', ...f.creds }), headers: { 'content-type': 'application/json' } }), 400, 'invalid_request'],
  ['malformed JSON body', () => ({ body: '{"grant_type":', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request'],
  ['text/plain body', (f) => ({ body: new URLSearchParams({ grant_type: 'client_credentials', ...f.creds } as Record<string, string>).toString(), headers: { 'content-type': 'text/plain' } }), 400, 'invalid_request'],
  ['multipart body', () => ({ body: '--b\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nclient_credentials\r\n--b--\r\n', headers: { 'content-type': 'multipart/form-data; boundary=b' } }), 400, 'invalid_request'],
  ['XML body', () => ({ body: '<grant_type>client_credentials</grant_type>', headers: { 'content-type': 'application/xml' } }), 400, 'invalid_request'],
  ['oversized form (over 64 KiB)', (f) => cc(f, { scope: long(70_000) }), 413, 'invalid_request'],
  ['non-UTF-8 bytes', (f) => ({ body: Buffer.concat([Buffer.from(`client_id=${f.basicId}&grant_type=`), Buffer.from([0xff, 0xfe, 0xc3])]), headers: { 'content-type': FORM, authorization: f.basic } }), 400, 'unsupported_grant_type'],
  ['percent garbage', (f) => ({ body: 'grant_type=%ZZ%E0%A4%A', headers: { 'content-type': FORM, authorization: f.basic } }), 400, 'unsupported_grant_type'],
  ['NUL in a parameter', (f) => cc(f, { scope: 'user\u0000' }), 400, 'invalid_request'],

  // grant_type (RFC 6749 §5.2 unsupported_grant_type, unauthorized_client).
  ['missing grant_type', (f) => ({ body: { ...f.creds } }), 400, 'invalid_request'],
  ['empty grant_type', (f) => ({ body: { grant_type: '', ...f.creds } }), 400, 'invalid_request'],
  ['repeated grant_type (§3.2)', (f) => ({ body: { grant_type: ['client_credentials', 'client_credentials'], ...f.creds } }), 400, 'invalid_request'],
  ['grant_type[] array syntax', (f) => ({ body: { 'grant_type[]': 'client_credentials', ...f.creds } }), 400, 'invalid_request'],
  ['unknown grant_type', (f) => ({ body: { grant_type: 'magic', ...f.creds } }), 400, 'unsupported_grant_type'],
  ['implicit at the token endpoint', (f) => ({ body: { grant_type: 'implicit', ...f.creds } }), 400, 'unsupported_grant_type'],
  ['unknown extension grant URI', (f) => ({ body: { grant_type: 'urn:example:params:oauth:grant-type:unknown', ...f.creds } }), 400, 'unsupported_grant_type'],
  // A grant served here (device_code since RFC 8628 support) but not registered for the client.
  ['served grant the client was not registered for', (f) => ({ body: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', ...f.creds } }), 400, 'unauthorized_client'],
  ['very long grant_type', (f) => ({ body: { grant_type: long(20_000), ...f.creds } }), 400, 'unsupported_grant_type'],
  ['grant the client may not use', (f) => ({ body: { grant_type: 'client_credentials', ...f.narrow } }), 400, 'unauthorized_client'],

  // Client authentication (RFC 6749 §2.3, §5.2 invalid_client).
  ['no client credentials', () => ({ body: { grant_type: 'client_credentials' } }), 401, 'invalid_client'],
  ['unknown client_id', () => ({ body: { grant_type: 'client_credentials', client_id: 'nope', client_secret: 'nope' } }), 401, 'invalid_client'],
  ['wrong client_secret', (f) => ({ body: { grant_type: 'client_credentials', client_id: f.id, client_secret: 'wrong' } }), 401, 'invalid_client'],
  ['empty client_secret', (f) => ({ body: { grant_type: 'client_credentials', client_id: f.id, client_secret: '' } }), 401, 'invalid_client'],
  ['very long client_id', () => ({ body: { grant_type: 'client_credentials', client_id: long(30_000), client_secret: 'x' } }), 401, 'invalid_client'],
  ['repeated client_id', (f) => ({ body: { grant_type: 'client_credentials', client_id: [f.id, f.id], client_secret: f.creds.client_secret! } }), 400, 'invalid_request'],
  ['repeated client_secret', (f) => ({ body: { grant_type: 'client_credentials', client_id: f.id, client_secret: [String(f.creds.client_secret), 'x'] } }), 400, 'invalid_request'],
  ['Basic and client_secret in the body', (f) => viaBasic(f.basic, { grant_type: 'client_credentials', client_secret: String(f.creds.client_secret) }), 400, 'invalid_request'],
  ['Basic with another client_id in the body', (f) => viaBasic(f.basic, { grant_type: 'client_credentials', client_id: 'someone-else' }), 401, 'invalid_client'],
  ['Basic without credentials', () => viaBasic('Basic'), 401, 'invalid_client'],
  ['Basic with non-base64', () => viaBasic('Basic !!!***'), 401, 'invalid_client'],
  ['Basic without a colon', (f) => viaBasic(`Basic ${b64(f.basicId)}`), 401, 'invalid_client'],
  ['Basic with an empty id and secret', () => viaBasic(`Basic ${b64(':')}`), 401, 'invalid_client'],
  ['Basic with percent garbage', () => viaBasic(`Basic ${b64('%ZZ:%E0%A4%A')}`), 401, 'invalid_client'],
  ['Basic with NUL in the id', () => viaBasic(`Basic ${b64('a%00b:secret')}`), 401, 'invalid_client'],
  ['Basic with binary garbage', () => viaBasic(`Basic ${Buffer.from([0xff, 0x3a, 0xfe, 0x00]).toString('base64')}`), 401, 'invalid_client'],
  ['Basic with a wrong secret', (f) => viaBasic(basic(f.basicId, 'wrong')), 401, 'invalid_client'],
  ['Basic, very long', () => viaBasic(`Basic ${b64(`${long(6000)}:${long(6000)}`)}`), 401, 'invalid_client'],
  ['Bearer instead of client credentials', () => viaBasic('Bearer abc'), 401, 'invalid_client'],

  // authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.1).
  ['missing code', (f) => code(f, { code: '' }), 400, 'invalid_request'],
  ['unknown code', (f) => code(f), 400, 'invalid_grant'],
  ['repeated code', (f) => code(f, { code: ['a', 'b'] }), 400, 'invalid_request'],
  ['very long code', (f) => code(f, { code: long(50_000) }), 400, 'invalid_grant'],
  ['repeated redirect_uri', (f) => code(f, { redirect_uri: ['https://a.example/', 'https://b.example/'] }), 400, 'invalid_request'],
  ['code_verifier too short', (f) => code(f, { code_verifier: long(42) }), 400, 'invalid_request'],
  ['code_verifier too long', (f) => code(f, { code_verifier: long(129) }), 400, 'invalid_request'],
  ['code_verifier with illegal characters', (f) => code(f, { code_verifier: `${long(42)}!` }), 400, 'invalid_request'],
  ['code_verifier with spaces', (f) => code(f, { code_verifier: `${long(30)} ${long(30)}` }), 400, 'invalid_request'],
  ['code_verifier non-ASCII', (f) => code(f, { code_verifier: 'é'.repeat(50) }), 400, 'invalid_request'],
  ['repeated code_verifier', (f) => code(f, { code_verifier: [long(43), long(43)] }), 400, 'invalid_request'],

  // refresh_token (RFC 6749 §6).
  ['missing refresh_token', (f) => ({ body: { grant_type: 'refresh_token', ...f.creds } }), 400, 'invalid_request'],
  ['unknown refresh_token', (f) => ({ body: { grant_type: 'refresh_token', refresh_token: 'gh_rt_nope', ...f.creds } }), 400, 'invalid_grant'],
  ['repeated refresh_token', (f) => ({ body: { grant_type: 'refresh_token', refresh_token: ['a', 'b'], ...f.creds } }), 400, 'invalid_request'],
  ['refresh with a malformed scope', (f) => ({ body: { grant_type: 'refresh_token', refresh_token: 'x', scope: 'a"b', ...f.creds } }), 400, 'invalid_scope'],

  // scope (RFC 6749 §3.3 scope-token = 1*( %x21 / %x23-5B / %x5D-7E )).
  ['scope with a quote', (f) => cc(f, { scope: 'user "read"' }), 400, 'invalid_scope'],
  ['scope with a backslash', (f) => cc(f, { scope: 'user\\read' }), 400, 'invalid_scope'],
  ['scope with a control character', (f) => cc(f, { scope: 'user\u0001' }), 400, 'invalid_scope'],
  ['scope with non-ASCII', (f) => cc(f, { scope: 'usér' }), 400, 'invalid_scope'],
  ['scope the client was not registered for', (f) => cc(f, { scope: 'admin' }), 400, 'invalid_scope'],
  ['very long scope', (f) => cc(f, { scope: 'a '.repeat(20_000) }), 400, 'invalid_scope'],
  ['repeated scope', (f) => cc(f, { scope: ['user', 'read'] }), 400, 'invalid_request'],

  // password (RFC 6749 §4.3).
  ['missing username', (f) => pw(f, { username: '' }), 400, 'invalid_request'],
  ['missing password', (f) => pw(f, { password: '' }), 400, 'invalid_request'],
  ['repeated username', (f) => pw(f, { username: ['a', 'b'] }), 400, 'invalid_request'],
  ['wrong credentials', (f) => pw(f), 400, 'invalid_grant'],
  // Random, so PostgreSQL cannot compress it into its index (guards the bound in src/core/oauth/grants/password.ts).
  ['very long username', (f) => pw(f, { username: randomBytes(20_000).toString('base64url') }), 400, 'invalid_grant'],
  ['very long password', (f) => pw(f, { password: long(40_000) }), 400, 'invalid_grant'],
  ['NUL in the username', (f) => pw(f, { username: 'bob\u0000' }), 400, 'invalid_request'],
];

for (const { kind, skip } of await databaseKinds()) {
  describe(`token endpoint input (${kind})`, { skip }, () => {
    let server: TestServer;
    let f: Fixtures;
    before(async () => {
      server = await startServer({ db: kind });
      const grantTypes = ['authorization_code', 'refresh_token', 'client_credentials', 'password'];
      const all = await server.createClient({ grantTypes, scope: 'user read', authMethod: 'client_secret_post' });
      const viaHeader = await server.createClient({ grantTypes, scope: 'user read' });
      const narrow = await server.createClient({ grantTypes: ['authorization_code'], authMethod: 'client_secret_post' });
      f = {
        id: all.id,
        creds: { client_id: all.id, client_secret: all.secret! },
        basic: basic(viaHeader.id, viaHeader.secret!),
        basicId: viaHeader.id,
        narrow: { client_id: narrow.id, client_secret: narrow.secret! },
      };
    });
    after(() => server.close());

    it('accepts a well-formed request (the baseline the cases break)', async () => {
      for (const path of ['/oauth/token', '/login/oauth/access_token']) {
        const res = await post(server.url, path, cc(f).body);
        assert.equal(res.status, 200, await res.clone().text());
        assert.equal(((await res.json()) as { token_type: string }).token_type, 'Bearer');
      }
    });

    for (const [name, build, status, error] of cases) {
      it(`${name} → ${status} ${error}`, async () => {
        for (const path of ['/oauth/token', '/login/oauth/access_token']) {
          const { body, headers } = build(f);
          const res = await post(server.url, path, body, headers);
          await expectOAuthError(res, status, error);
          // RFC 6749 §5.2: a failed authentication through the header answers with a challenge.
          if (status === 401 && headers?.authorization?.startsWith('Basic')) assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /);
        }
      });
    }
  });
}
