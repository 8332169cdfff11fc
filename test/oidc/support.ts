/**
 * Shared pieces of the OpenID Connect suites: a relying party built with
 * openid-client v6 (OpenID Certified) from our discovery document, and a
 * person at the login and consent pages (test/helpers/agent.ts).
 */
import * as oidc from 'openid-client';
import { createUser } from '../../src/core/admin.js';
import type { Agent } from '../helpers/agent.js';
import { visit as visitAs, type Visited } from '../helpers/authorize.js';
import type { TestServer } from '../helpers/server.js';

export const REDIRECT = 'https://rp.example.test/callback';
export const PASSWORD = 'correct horse battery staple';

/** A person with a display name, so the profile claims have something to say. */
export async function person(server: TestServer, username: string): Promise<{ id: string; username: string; password: string; email: string }> {
  const email = `${username}@example.test`;
  const u = await createUser(server.gh.storage, server.gh.hasher, server.gh.clock, { username, email, password: PASSWORD, name: `${username[0]!.toUpperCase()}${username.slice(1)} Example` });
  return { id: u.id, username, password: PASSWORD, email };
}

/**
 * OpenID Connect Discovery (`/.well-known/openid-configuration`), http
 * allowed on loopback, and ID token signatures checked against the
 * discovered `jwks_uri` (openid-client skips that by default for tokens from
 * the token endpoint, as OpenID Connect Core §3.1.3.7 allows).
 */
export function relyingParty(server: TestServer, clientId: string, secret?: string): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(server.url), clientId, secret, secret ? oidc.ClientSecretBasic() : oidc.None(), {
    execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
  });
}

/** The person's part of an authorization request, signing in as `user` when asked (test/helpers/authorize.ts). */
export function visit(agent: Agent, user: { username: string; password: string }, url: URL | string): Promise<Visited> {
  return visitAs(agent, new URL(url), { user });
}

/** The code flow as an OpenID relying party: state, nonce, PKCE; the library validates the ID token. */
export async function signIn(config: oidc.Configuration, agent: Agent, user: { username: string; password: string }, scope: string, extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT, scope, state, nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra,
  });
  const seen = await visit(agent, user, url);
  const tokens = await oidc.authorizationCodeGrant(config, seen.callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  return { tokens, nonce, ...seen };
}
