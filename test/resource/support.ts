import assert from 'node:assert/strict';
import { createClient, createUser } from '../../src/core/admin.js';
import type { Gatehouse } from '../../src/gatehouse.js';

/** A user with a display name, and a client that may use the password grant for quick tokens. */
export async function seed(server: { gh: Gatehouse; url: string }, opts: { tokenFormat?: 'jwt' | 'opaque'; username?: string } = {}) {
  const { gh } = server;
  const password = 'correct horse battery staple';
  const username = opts.username ?? 'alice';
  const user = await createUser(gh.storage, gh.hasher, gh.clock, { username, email: `${username}@example.test`, password, name: 'Alice Liddell' });
  const { client: registered, secret } = await createClient(gh.storage, gh.clock, {
    name: 'Test app',
    redirectUris: [],
    grantTypes: ['password', 'refresh_token', 'client_credentials'],
    scope: 'user profile email chat',
    tokenFormat: opts.tokenFormat ?? 'jwt',
  });
  const client = { id: registered.id, secret: secret! };
  const basic = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
  const tokenRequest = async (fields: Record<string, string>) => {
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });
    const body = (await res.json()) as Record<string, string>;
    assert.equal(res.status, 200, JSON.stringify(body));
    return body;
  };
  return {
    user,
    client,
    /** Access (and refresh) token for the user with this scope. */
    tokens: (scope = 'user') => tokenRequest({ grant_type: 'password', username, password, scope }),
    token: async (scope = 'user') => (await tokenRequest({ grant_type: 'password', username, password, scope })).access_token!,
    clientToken: async () => (await tokenRequest({ grant_type: 'client_credentials', scope: 'user' })).access_token!,
    revoke: async (token: string) => {
      const res = await fetch(`${server.url}/oauth/revoke`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
      assert.equal(res.status, 200);
    },
  };
}

export interface Answer {
  status: number;
  challenge: string | null;
  body: Record<string, unknown>;
  headers: Headers;
}

/** Calls {api_url}/user and reads what came back. */
export async function callUser(apiUrl: string, init: { token?: string; query?: Record<string, string> | string; form?: string; method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const qs = typeof init.query === 'string' ? init.query : init.query ? new URLSearchParams(init.query).toString() : '';
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(`${apiUrl}/user${qs ? `?${qs}` : ''}`, {
    method: init.method ?? (init.form !== undefined ? 'POST' : 'GET'),
    headers,
    ...(init.form !== undefined ? { body: init.form } : {}),
  });
  const text = await res.text();
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: res.headers };
}

/** Asserts an RFC 6750 §3 failure: status, error code in both header and body. */
export function assertBearerError(a: Answer, status: number, error: string): void {
  assert.equal(a.status, status, JSON.stringify(a.body));
  assert.ok(a.challenge?.startsWith('Bearer realm="gatehouse"'), `challenge: ${a.challenge}`);
  assert.match(a.challenge!, new RegExp(`error="${error}"`));
  assert.equal(a.body.error, error);
  assert.equal(a.headers.get('cache-control'), 'no-store');
}
