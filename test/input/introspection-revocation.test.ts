/**
 * Hostile input at introspection (RFC 7662), revocation (RFC 7009), the
 * token_key endpoint and the metadata documents: RFC 6749 §5.2 JSON errors,
 * never a 500. One line a case.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { FORM, basic, expectOAuthError, get, post, type Fields } from '../security/support.js';

interface Fixtures {
  /** Basic header of a client allowed to introspect. */
  rs: string;
  /** Basic header of a client that is not. */
  app: string;
  appId: string;
}

type Req = { body: Fields | string | Uint8Array; headers?: Record<string, string> };
/** status 200 with `active: false` is the right answer for a token that is garbage (RFC 7662 §2.2). */
type Case = [name: string, req: (f: Fixtures) => Req, status: number, error?: string];

const long = (n: number) => 'x'.repeat(n);
const as = (authorization: string, body: Fields | string = {}, type = FORM): Req => ({ body, headers: { authorization, 'content-type': type } });

const introspection: Case[] = [
  ['no client authentication', () => ({ body: { token: 'x' } }), 401, 'invalid_client'],
  ['malformed Basic', () => as('Basic %%%', { token: 'x' }), 401, 'invalid_client'],
  ['wrong secret', (f) => as(basic(f.appId, 'wrong'), { token: 'x' }), 401, 'invalid_client'],
  ['a client not allowed to introspect (RFC 7662 §4)', (f) => as(f.app, { token: 'x' }), 403, 'unauthorized_client'],
  ['missing token', (f) => as(f.rs), 400, 'invalid_request'],
  ['empty token', (f) => as(f.rs, { token: '' }), 400, 'invalid_request'],
  ['repeated token', (f) => as(f.rs, { token: ['a', 'b'] }), 400, 'invalid_request'],
  ['repeated token_type_hint', (f) => as(f.rs, { token: 'a', token_type_hint: ['access_token', 'refresh_token'] }), 400, 'invalid_request'],
  ['JSON body', (f) => as(f.rs, JSON.stringify({ token: 'x' }), 'application/json'), 400, 'invalid_request'],
  ['malformed JSON body', (f) => as(f.rs, '{', 'application/json'), 400, 'invalid_request'],
  ['text/plain body', (f) => as(f.rs, 'token=x', 'text/plain'), 400, 'invalid_request'],
  ['oversized body', (f) => as(f.rs, { token: long(70_000) }), 413, 'invalid_request'],
  ['NUL in the token', (f) => as(f.rs, { token: 'gh_at_\u0000' }), 400, 'invalid_request'],
  ['garbage token', (f) => as(f.rs, { token: 'not a token' }), 200],
  ['three dots, not a JWT', (f) => as(f.rs, { token: 'a.b.c' }), 200],
  ['JWT with a forged alg none header', (f) => as(f.rs, { token: `${Buffer.from('{"alg":"none","typ":"at+jwt"}').toString('base64url')}.${Buffer.from('{"client_id":"x","jti":"y","exp":9999999999}').toString('base64url')}.` }), 200],
  ['JWT header that is not JSON', (f) => as(f.rs, { token: `${Buffer.from('{{{').toString('base64url')}.e30.e30` }), 200],
  ['unknown opaque token', (f) => as(f.rs, { token: 'gh_at_nope' }), 200],
  ['unknown refresh token', (f) => as(f.rs, { token: 'gh_rt_nope' }), 200],
  ['very long token', (f) => as(f.rs, { token: long(50_000) }), 200],
  ['percent-garbage token', (f) => as(f.rs, 'token=%ZZ%E0%A4%A%FF'), 200],
  ['unknown token_type_hint (RFC 7662 §2.1: ignored)', (f) => as(f.rs, { token: 'x', token_type_hint: 'banana' }), 200],
];

const revocation: Case[] = [
  ['no client authentication', () => ({ body: { token: 'x' } }), 401, 'invalid_client'],
  ['malformed Basic', () => as('Basic', { token: 'x' }), 401, 'invalid_client'],
  ['missing token', (f) => as(f.app), 400, 'invalid_request'],
  ['repeated token', (f) => as(f.app, { token: ['a', 'b'] }), 400, 'invalid_request'],
  ['JSON body', (f) => as(f.app, JSON.stringify({ token: 'x' }), 'application/json'), 400, 'invalid_request'],
  ['text/plain body', (f) => as(f.app, 'token=x', 'text/plain'), 400, 'invalid_request'],
  ['oversized body', (f) => as(f.app, { token: long(70_000) }), 413, 'invalid_request'],
  // RFC 7009 §2.2: an invalid token is not an error, so the endpoint reveals nothing.
  ['unknown token', (f) => as(f.app, { token: 'gh_rt_nope' }), 200],
  ['garbage token', (f) => as(f.app, { token: 'a.b.c' }), 200],
  ['very long token', (f) => as(f.app, { token: long(50_000) }), 200],
];

describe('introspection, revocation, token_key and metadata input', () => {
  let server: TestServer;
  let f: Fixtures;
  before(async () => {
    server = await startServer();
    const rs = await server.createClient({ grantTypes: ['client_credentials'], redirectUris: [], introspect: true });
    const app = await server.createClient({});
    f = { rs: basic(rs.id, rs.secret!), app: basic(app.id, app.secret!), appId: app.id };
  });
  after(() => server.close());

  const run = (path: string, table: Case[]) => {
    for (const [name, build, status, error] of table) {
      it(`${path}: ${name} → ${status} ${error ?? ''}`, async () => {
        const { body, headers } = build(f);
        const res = await post(server.url, path, body, headers);
        if (status !== 200) {
          await expectOAuthError(res, status, error);
          if (status === 401 && headers?.authorization?.startsWith('Basic')) assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /);
          return;
        }
        assert.equal(res.status, 200, await res.clone().text());
        assert.match(res.headers.get('cache-control') ?? '', /no-store/);
        if (path === '/oauth/check_token') assert.deepEqual(await res.json(), { active: false });
      });
    }
  };
  run('/oauth/check_token', introspection);
  run('/oauth/revoke', revocation);

  const keys: [name: string, headers: (f: Fixtures) => Record<string, string>, status: number][] = [
    ['no client authentication', () => ({}), 401],
    ['malformed Basic', () => ({ authorization: 'Basic ***' }), 401],
    ['Basic of an unknown client', () => ({ authorization: basic('nope', 'nope') }), 401],
    ['Basic with NUL', () => ({ authorization: `Basic ${Buffer.from('%00:%00').toString('base64')}` }), 401],
    ['Bearer instead of Basic', () => ({ authorization: 'Bearer x' }), 401],
    ['a valid client', (x) => ({ authorization: x.app }), 200],
  ];
  for (const [name, headers, status] of keys) {
    it(`GET /oauth/token_key: ${name} → ${status}`, async () => {
      const res = await get(server.url, '/oauth/token_key', headers(f));
      if (status === 200) {
        assert.equal(res.status, 200);
        assert.ok(Array.isArray(((await res.json()) as { keys: unknown }).keys));
      } else {
        await expectOAuthError(res, status, 'invalid_client');
        assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /);
      }
    });
  }

  const wellKnown: [path: string, status: number][] = [
    ['/.well-known/oauth-authorization-server', 200],
    ['/.well-known/jwks.json', 200],
    ['/.well-known/oauth-authorization-server?x=%ZZ&x=1', 200],
    ['/.well-known/unknown', 404],
    ['/.well-known/', 404],
    ['/.well-known/..%2f..%2fetc%2fpasswd', 404],
    [`/.well-known/${'x'.repeat(5000)}`, 404],
    // NUL anywhere in a request is refused before routing gets a say (src/http/common.ts rejectNulCharacters).
    ['/.well-known/%00', 400],
  ];
  for (const [path, status] of wellKnown) {
    it(`GET ${path.slice(0, 60)} → ${status}`, async () => {
      const res = await get(server.url, path);
      if (status === 200) {
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        await res.json();
      } else {
        await expectOAuthError(res, status, 'invalid_request');
      }
    });
  }
});
