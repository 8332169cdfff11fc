import { randomToken, s256, safeEqual, sha256 } from '../crypto.js';
import { single, type Params } from '../params.js';
import type { OutboundHttp } from '../outbound.js';
import type { Clock } from '../ports.js';
import { mapClaims, type ExternalProfile } from './claims.js';
import type { EndpointResolver } from './discovery.js';
import { badSignIn, providerFailed, signInCancelled } from './errors.js';
import { callProvider } from './fetch.js';
import type { IdTokenVerifier } from './id-token.js';
import type { FlowStore } from './ports.js';
import type { Provider } from './providers.js';

/** How long a person may spend at the provider before the sign-in must start again. */
export const FLOW_TTL_MS = 10 * 60_000;

/** What we remember between sending the browser to the provider and its return. */
interface LoginFlow {
  kind: 'login';
  provider: string;
  verifier: string;
  nonce: string;
  returnTo: string;
  redirectUri: string;
}

const USER_AGENT = 'Gatehouse (third-party login)';
/** RFC 6749 §2.3.1: id and secret are form-encoded before Basic. */
const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');

/**
 * Gatehouse as the OAuth client of a provider: authorization code with PKCE
 * (RFC 7636, S256 always), `state` bound to the browser by a cookie (RFC 6749
 * §10.12), `nonce` for OpenID Connect (Core §3.1.2.1), `iss` checked when
 * the provider sends it (RFC 9207).
 */
export class ProviderSignIn {
  constructor(private readonly deps: { flows: FlowStore; clock: Clock; http: OutboundHttp; endpoints: EndpointResolver; idTokens: IdTokenVerifier }) {}

  /** The provider's authorization URL, and the `state` the browser must keep (in a cookie) until it returns. */
  async begin(p: Provider, redirectUri: string, returnTo: string): Promise<{ location: string; state: string }> {
    const endpoints = await this.deps.endpoints.resolve(p);
    const state = randomToken();
    const flow: LoginFlow = { kind: 'login', provider: p.id, verifier: randomToken(32), nonce: randomToken(), returnTo, redirectUri };
    const now = this.deps.clock.now();
    await this.deps.flows.save(sha256(state), JSON.stringify(flow), now + FLOW_TTL_MS, now);
    const u = new URL(endpoints.authorization);
    const q: Record<string, string> = {
      response_type: 'code', client_id: p.clientId, redirect_uri: redirectUri, state,
      code_challenge: s256(flow.verifier), code_challenge_method: 'S256',
      ...(p.scopes.length ? { scope: p.scopes.join(' ') } : {}),
      ...(p.type === 'oidc' ? { nonce: flow.nonce } : {}),
    };
    for (const [k, v] of Object.entries(q)) u.searchParams.set(k, v);
    return { location: u.toString(), state };
  }

  /** Checks the provider's answer, redeems the code, and says who signed in. */
  async finish(p: Provider, query: Params, stateCookie: string | undefined): Promise<{ profile: ExternalProfile; returnTo: string }> {
    const state = single(query, 'state');
    const expired = () => badSignIn('This sign-in has expired or was started in another browser. Start again.');
    if (!state || !stateCookie || state.length > 128 || !safeEqual(state, stateCookie)) throw expired();
    const now = this.deps.clock.now();
    const stored = await this.deps.flows.take(sha256(state), now);
    if (!stored) throw expired();
    const flow = JSON.parse(stored) as LoginFlow;
    if (flow.kind !== 'login' || flow.provider !== p.id) throw expired();

    const endpoints = await this.deps.endpoints.resolve(p);
    // RFC 9207 §2.4: the answer must come from the provider we sent the person to (mix-up attacks).
    const iss = single(query, 'iss');
    if (iss !== undefined ? endpoints.issuer !== undefined && iss !== endpoints.issuer : endpoints.issRequired) {
      throw badSignIn(`The answer did not come from ${p.name}. Start again.`);
    }
    const error = single(query, 'error');
    if (error === 'access_denied') throw signInCancelled(`You did not let ${p.name} sign you in.`);
    if (error !== undefined) throw badSignIn(`${p.name} could not sign you in (${error.replace(/[^a-z_]/g, '').slice(0, 40)}).`);
    const code = single(query, 'code');
    if (!code) throw badSignIn(`${p.name} sent no authorization code.`);

    const accessToken = await this.redeem(p, endpoints.token, code, flow);
    const info = await this.userInfo(p, endpoints, accessToken, flow);
    const profile = mapClaims(p.id, info, p.claims);
    if (!profile) throw providerFailed(`${p.name} did not say who signed in`);
    return { profile, returnTo: flow.returnTo };
  }

  /** RFC 6749 §4.1.3 with the PKCE verifier (RFC 7636 §4.5). */
  private async redeem(p: Provider, tokenEndpoint: string, code: string, flow: LoginFlow): Promise<{ token: string; idToken: unknown }> {
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: flow.redirectUri, code_verifier: flow.verifier });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': USER_AGENT };
    if (p.tokenEndpointAuthMethod === 'client_secret_basic') {
      headers.authorization = `Basic ${Buffer.from(`${formEncode(p.clientId)}:${formEncode(p.clientSecret!)}`).toString('base64')}`;
    } else {
      form.set('client_id', p.clientId);
      if (p.tokenEndpointAuthMethod === 'client_secret_post') form.set('client_secret', p.clientSecret!);
    }
    const { status, body } = await callProvider(this.deps.http, tokenEndpoint, { method: 'POST', headers, body: form.toString() }, 'token');
    // GitHub answers errors with 200 and an `error` member.
    if (body.error === 'invalid_grant' || body.error === 'bad_verification_code') throw badSignIn(`${p.name} did not accept the sign-in (it may have taken too long). Start again.`);
    if (status !== 200 || body.error !== undefined) throw providerFailed(`${p.name} refused to complete the sign-in`);
    if (typeof body.access_token !== 'string' || !body.access_token) throw providerFailed(`${p.name} sent no access token`);
    if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') throw providerFailed(`${p.name} sent a token of a kind we cannot use`);
    return { token: body.access_token, idToken: body.id_token };
  }

  private async userInfo(p: Provider, endpoints: Awaited<ReturnType<EndpointResolver['resolve']>>, at: { token: string; idToken: unknown }, flow: LoginFlow): Promise<Record<string, unknown>> {
    let claims: Record<string, unknown> = {};
    if (p.type === 'oidc') {
      claims = await this.deps.idTokens.verify(at.idToken, { issuer: endpoints.issuer!, clientId: p.clientId, jwksUri: endpoints.jwksUri!, nonce: flow.nonce });
      if (!endpoints.userinfo) return claims;
    }
    if (!endpoints.userinfo) throw providerFailed(`${p.name} has no user info endpoint`);
    const { status, body } = await callProvider(this.deps.http, endpoints.userinfo, {
      headers: { authorization: `Bearer ${at.token}`, accept: 'application/json', 'user-agent': USER_AGENT },
    }, 'user info');
    if (status !== 200) throw providerFailed(`${p.name} would not say who signed in (HTTP ${status})`);
    // OpenID Connect Core §5.3.2: user info about someone other than the ID token's subject is not used.
    if (p.type === 'oidc' && body.sub !== claims.sub) throw badSignIn(`${p.name} described someone else than who signed in.`);
    return { ...claims, ...body };
  }
}
