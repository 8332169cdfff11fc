import assert from 'node:assert/strict';
import type { Agent } from '../helpers/agent.js';
import { signedIn, type SignedIn } from '../helpers/people.js';
import type { TestServer } from '../helpers/server.js';

/** A person signed in through the login form whose account has the admin flag (`user create … --admin`). */
export async function signedInAdmin(server: TestServer, username = 'root'): Promise<SignedIn> {
  const agent = await signedIn(server, username);
  assert.ok(await server.gh.console.setAdmin(agent.user.id, true));
  return agent;
}

/** A browser's GET: it asks for HTML, which is what sends it to the console rather than the JSON API. */
export function open(agent: Agent, path: string): Promise<Response> {
  return agent.request(path, { headers: { accept: 'text/html' } });
}

/** A browser's form POST. */
export function submit(agent: Agent, path: string, fields: Record<string, string | string[]>): Promise<Response> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
  return agent.request(path, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
}

/** The CSRF token the console's forms carry. */
export async function csrfOf(agent: Agent, path = '/admin/clients'): Promise<string> {
  const res = await open(agent, path);
  assert.equal(res.status, 200, `GET ${path}`);
  const token = /name="csrf_token" value="([^"]+)"/.exec(await res.text())?.[1];
  assert.ok(token, 'the page has a form with a CSRF token');
  return token;
}
