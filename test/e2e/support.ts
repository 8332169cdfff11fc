/**
 * Shared pieces of the end-to-end suites: an independent OAuth client
 * (openid-client v6, configured by RFC 8414 discovery of our metadata) and a
 * person at the login and consent pages (test/helpers/agent.ts).
 */
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { authorize } from '../helpers/authorize.js';
import type { Agent } from '../helpers/agent.js';
import type { TestServer } from '../helpers/server.js';

export const REDIRECT = 'https://app.example.test/callback';

/**
 * A client configuration built the way a third-party application would:
 * plain-OAuth discovery (`/.well-known/oauth-authorization-server`, RFC 8414 §3),
 * with http allowed because the server listens on loopback.
 */
export function discover(
  server: TestServer,
  clientId: string,
  secret?: string,
  auth: oidc.ClientAuth = secret ? oidc.ClientSecretBasic() : oidc.None(),
): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(server.url), clientId, secret, auth, {
    algorithm: 'oauth2',
    execute: [oidc.allowInsecureRequests],
  });
}

export interface OAuthFailure {
  error: string;
  status: number;
  /** The WWW-Authenticate challenge scheme, when the server sent one (RFC 6749 §5.2 invalid_client). */
  challenge: string | undefined;
}

/** Runs `fn`, which must fail with an OAuth error response body (RFC 6749 §5.2); returns what it said. */
export async function oauthError(fn: () => Promise<unknown>): Promise<OAuthFailure> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof oidc.ResponseBodyError) return { error: e.error, status: e.status, challenge: undefined };
    // openid-client reports a 401 with a challenge before looking at the body, which is left unread.
    if (e instanceof oidc.WWWAuthenticateChallengeError) {
      const body = (await e.response.json()) as { error: string };
      return { error: body.error, status: e.status, challenge: e.cause[0]?.scheme };
    }
    assert.fail(`expected an OAuth error response, got ${String(e)}`);
  }
  assert.fail('expected an OAuth error response');
}

/** The authorization code flow through openid-client, PKCE S256 and state included. */
export async function codeFlow(
  config: oidc.Configuration,
  agent: Agent,
  user: { username: string; password: string },
  scope: string,
): Promise<Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const callback = await authorize(agent, url, { user });
  return oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
}
