import { Agent, parseForm } from '../helpers/agent.js';
import type { DbKind } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * Two Gatehouse instances: `provider` is someone else's authorization server
 * (on 127.0.0.2, so a browser keeps its cookies apart from ours), and `rp`
 * signs people in through it as its OAuth client.
 */
export interface Federated {
  provider: TestServer;
  rp: TestServer;
  /** The client `rp` is at `provider`. */
  client: { id: string; secret: string | undefined };
  close(): Promise<void>;
}

export const PROVIDER_ID = 'elsewhere';
export const PROVIDER_NAME = 'Elsewhere';

/** Provider entries for `rp`, by type; Gatehouse's /user has no `sub`, so its username is the subject. */
export function providerEntry(type: 'github' | 'oauth2' | 'oidc', provider: TestServer, client: { id: string; secret: string | undefined }, over: Record<string, unknown> = {}) {
  const common = { id: PROVIDER_ID, name: PROVIDER_NAME, client_id: client.id, client_secret: client.secret, scopes: ['user'], claims: { subject: 'username', username: 'username' } };
  if (type === 'github') return { ...common, type, base_url: provider.url, api_url: provider.apiUrl, ...over };
  // OpenID Connect: endpoints from discovery, the default claims (sub, preferred_username, email, name).
  if (type === 'oidc') return { ...common, type, issuer: provider.url, scopes: ['openid', 'profile', 'email'], claims: undefined, ...over };
  return {
    ...common, type, issuer: provider.url, authorization_endpoint: `${provider.url}/oauth2`, token_endpoint: `${provider.url}/oauth/token`,
    userinfo_endpoint: `${provider.apiUrl}/user`, token_endpoint_auth_method: 'client_secret_basic', ...over,
  };
}

export async function startFederated(opts: { db?: DbKind; type?: 'github' | 'oauth2' | 'oidc'; trusted?: boolean; rpEnv?: Record<string, string> } = {}): Promise<Federated> {
  const provider = await startServer({ db: opts.db ?? 'sqlite', env: { GATEHOUSE_HOST: '127.0.0.2' } });
  // Registered before `rp` listens; its redirect URI is set once `rp`'s port is known.
  // GitHub's convention (and so the default for a `github` provider) is the secret in the body.
  const authMethod = (opts.type ?? 'github') === 'github' ? 'client_secret_post' : 'client_secret_basic';
  const client = await provider.createClient({ name: 'Gatehouse at Example Corp', redirectUris: ['http://127.0.0.1/federation/elsewhere/callback'],
    scope: opts.type === 'oidc' ? 'openid profile email' : 'user', trusted: opts.trusted ?? false, authMethod });
  let rp: TestServer;
  try {
    rp = await startServer({ db: opts.db ?? 'sqlite', env: { GATEHOUSE_PROVIDERS: JSON.stringify([providerEntry(opts.type ?? 'github', provider, client)]), ...opts.rpEnv } });
  } catch (e) {
    await provider.close();
    throw e;
  }
  await provider.gh.storage.clients.update(client.id, { redirectUris: [`${rp.url}/federation/${PROVIDER_ID}/callback`] });
  return { provider, rp, client, close: async () => { await rp.close(); await provider.close(); } };
}

/**
 * Drives a sign-in through the provider without a browser: `rpAgent` is the
 * person's cookies at rp, `providerAgent` at the provider. Returns rp's
 * answer to the provider's redirect back (the callback response).
 */
export async function signInThroughProvider(f: Federated, rpAgent: Agent, providerAgent: Agent, who: { username: string; password: string }, returnTo = '/'): Promise<Response> {
  const login = await rpAgent.get(`/login?return_to=${encodeURIComponent(returnTo)}`);
  const link = /<a class="button" href="([^"]+)">Sign in with Elsewhere<\/a>/.exec(await login.text());
  if (!link) throw new Error('no "Sign in with Elsewhere" on the login page');
  const start = await rpAgent.get(link[1]!.replace(/&amp;/g, '&'));
  if (start.status !== 302) throw new Error(`start answered ${start.status}`);
  const authorize = start.headers.get('location')!;
  let res = await providerAgent.get(authorize);
  if (res.status === 302 && new URL(res.headers.get('location')!, f.provider.url).pathname === '/login') {
    const returnAt = new URL(res.headers.get('location')!, f.provider.url).searchParams.get('return_to')!;
    res = await providerAgent.login(who.username, who.password, returnAt);
    res = await providerAgent.get(res.headers.get('location')!);
  }
  if (res.status === 200) {
    // The provider's consent page.
    const form = parseForm(await res.text());
    res = await providerAgent.post(form.action, { ...form.fields, approve: 'true' });
  }
  const back = res.headers.get('location');
  if (!back?.startsWith(f.rp.url)) throw new Error(`the provider did not send the browser back (${res.status} ${back})`);
  return rpAgent.get(back);
}
