import assert from 'node:assert/strict';
import { Agent } from './agent.js';
import type { TestServer } from './server.js';

// The two ways a test person is signed in: at the login form (a session
// cookie, `signedIn`) or as a client's user (a bearer token, `signedInPerson`).

/** A browser-less person: an agent holding their session cookie, and the account it belongs to. */
export type SignedIn = Agent & { user: { id: string; username: string; password: string } };

/**
 * Creates a person with an account and signs them in through the login form
 * (CSRF token, cookie and all), as a browser would. The agent carries the
 * session cookie from then on.
 */
export async function signedIn(server: Pick<TestServer, 'url' | 'createUser'>, username: string): Promise<SignedIn> {
  const user = await server.createUser(username);
  const agent = new Agent(server.url);
  const res = await agent.login(user.username, user.password);
  assert.equal(res.status, 303, 'sign-in succeeded');
  return Object.assign(agent, { user });
}

/** A person who talks to bots: a bearer token of scope `chat`, obtained over HTTP from the authorization server. */
export interface Person {
  username: string;
  token: string;
}

/** One password-grant client per server, created on first use. */
const clientFor = new WeakMap<TestServer, { id: string; secret: string }>();

/** Creates a person with an account and gets them a `chat` token through the password grant (RFC 6749 §4.3). */
export async function signedInPerson(server: TestServer, username: string): Promise<Person> {
  let client = clientFor.get(server);
  if (!client) {
    const c = await server.createClient({ name: 'Chat test app', grantTypes: ['password'], redirectUris: [], scope: 'chat' });
    client = { id: c.id, secret: c.secret! };
    clientFor.set(server, client);
  }
  const user = await server.createUser(username);
  const res = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username, password: user.password, scope: 'chat' }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return { username, token: ((await res.json()) as { access_token: string }).access_token };
}
