import { newFamilyId } from './token-key.js';
import { GatehouseError, invalidRequest, unauthorizedClient, unsupportedResponseType, accessDenied, type ErrorRedirect } from '../errors.js';
import { randomToken, sha256 } from '../crypto.js';
import type { Client } from '../model.js';
import { isPublic } from '../model.js';
import type { Clock, Storage, Stores } from '../ports.js';
import { single, type Params } from '../params.js';
import { formatScope, isSubset, resolveScope } from '../scope.js';
import { recordEvent } from '../notify/record.js';
import type { OAuthConfig } from './config.js';
import { redirectUriMatches } from './redirect-uri.js';
import { allowedResources, requestedResources, resolveResources } from './resource-indicators.js';
import type { TokenIssuer } from './tokens.js';
import { JKT } from './dpop.js';
import { parseAuthenticationParams, type AuthenticationParams } from '../oidc/prompt.js';
import { claimsScopes, encodeClaims, limitClaims, parseClaimsRequest, type ClaimsRequest } from '../oidc/claims-request.js';
import type { RequestObjects } from './request-object.js';

export interface AuthorizationRequest {
  client: Client;
  /** Where the response goes. */
  redirectUri: string;
  /** redirect_uri as sent, or null when omitted (then it must also be omitted at the token endpoint). */
  redirectUriParam: string | null;
  responseType: 'code' | 'token';
  scope: string[];
  state: string | undefined;
  codeChallenge: string | undefined;
  /** RFC 8707 §2.1: the resources the request named (entries of the client's allowed set). */
  resources?: string[] | undefined;
  /** RFC 9449 §10 `dpop_jkt`: the DPoP key the code must be redeemed with. */
  dpopJkt?: string | undefined;
  nonce: string | undefined;
  /** OpenID Connect `prompt` and `max_age` (src/core/oidc/prompt.ts). */
  authentication: AuthenticationParams;
  /** OpenID Connect Core §3.1.2.1 `login_hint`: fills the login page's username field. */
  loginHint?: string | undefined;
  /** OpenID Connect Core §5.5 `claims`, limited to the claims we hold and the client may get. */
  claims?: ClaimsRequest | undefined;
}

/** The scopes the person consents to: those asked for, and those the claims parameter's claims are released under. */
export function consentScope(req: AuthorizationRequest): string[] {
  return [...new Set([...req.scope, ...claimsScopes(req.claims)])];
}

/** The person approving: `sid` names their session (OpenID Connect), when they have one. */
export interface SignedInUser {
  id: string;
  authTime: number;
  sid?: string;
  /** How the session authenticated (RFC 8176; src/core/oidc/acr.ts), kept with the sign-in for `acr`/`amr`. */
  amr?: string[];
}

export type { ErrorRedirect } from '../errors.js';

/**
 * A failed authorization request throws a `GatehouseError`; once the client
 * and its redirect URI are verified it carries `redirect`, and the answer goes
 * there. Without it the person sees an error page: we never redirect to an
 * unverified URI (RFC 6749 §4.1.2.1, RFC 9700 §4.11).
 */
const withRedirect = (e: unknown, redirect: ErrorRedirect): unknown =>
  e instanceof GatehouseError && e.status < 500 ? e.with({ redirect }) : e;

/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Builds a redirect with response parameters in the query or the fragment (RFC 6749 §4.1.2, §4.2.2). */
export function buildRedirect(uri: string, mode: 'query' | 'fragment', values: Record<string, string | undefined>): string {
  const entries = Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined);
  if (mode === 'fragment') return `${uri}#${new URLSearchParams(entries).toString()}`;
  const url = new URL(uri);
  for (const [k, v] of entries) url.searchParams.append(k, v);
  return url.toString();
}

export class AuthorizationEndpoint {
  constructor(
    private readonly deps: { storage: Storage; config: OAuthConfig; clock: Clock; tokenIssuer: TokenIssuer; requestObjects?: RequestObjects },
  ) {}

  /** The redirect URI `params` name for `client`, verified (RFC 6749 §3.1.2.3); throws an error for a page otherwise. */
  private redirectFor(client: Client, params: Params): { redirectUri: string; redirectParam: string | undefined } {
    const redirectParam = single(params, 'redirect_uri');
    if (redirectParam !== undefined) {
      if (!redirectUriMatches(client.redirectUris, redirectParam, isPublic(client))) throw invalidRequest('redirect_uri is not registered for this client');
      return { redirectUri: redirectParam, redirectParam };
    }
    if (client.redirectUris.length === 1) return { redirectUri: client.redirectUris[0]!, redirectParam };
    throw invalidRequest('missing redirect_uri');
  }

  /**
   * A request object (RFC 9101, OpenID Connect Core §6) replaced by the
   * request it carries. A bad one is answered at the redirect URI the
   * parameters beside it name, once that is verified (RFC 9101 §6), with the
   * state sent beside it: nothing inside an object refused can be trusted.
   */
  private async expandRequestObject(client: Client, params: Params): Promise<Params> {
    if (params.request === undefined && params.request_uri === undefined) return params;
    try {
      if (!this.deps.requestObjects) throw new GatehouseError('request_not_supported', 'request objects are not supported');
      return await this.deps.requestObjects.resolve(client, params, { pushed: false });
    } catch (e) {
      const { redirectUri } = this.redirectFor(client, params);
      let state: string | undefined;
      try {
        state = single(params, 'state');
      } catch {
        state = undefined;
      }
      throw withRedirect(e, { redirectUri, mode: params.response_type === 'token' ? 'fragment' : 'query', state });
    }
  }

  /** Validates client and redirect URI first, then the rest (RFC 6749 §4.1.2.1). */
  async validate(sent: Params): Promise<AuthorizationRequest> {
    const fatal = invalidRequest;
    const clientId = single(sent, 'client_id');
    if (!clientId) throw fatal('missing client_id');
    const client = await this.deps.storage.clients.get(clientId);
    if (!client) throw fatal('unknown client');
    const params = await this.expandRequestObject(client, sent);
    const { redirectUri, redirectParam } = this.redirectFor(client, params);

    // From here on errors go back to the client's verified redirect URI.
    const rawType = params.response_type;
    const mode = rawType === 'token' ? 'fragment' : 'query';
    let state: string | undefined;
    try {
      state = single(params, 'state');
    } catch (e) {
      throw withRedirect(e, { redirectUri, mode, state: undefined });
    }
    try {
      const responseType = single(params, 'response_type');
      if (responseType === undefined) throw invalidRequest('missing response_type');
      if (responseType !== 'code' && responseType !== 'token') {
        throw unsupportedResponseType(`response_type ${responseType} is not supported`);
      }
      const grant = responseType === 'code' ? 'authorization_code' : 'implicit';
      if (!client.grantTypes.includes(grant)) throw unauthorizedClient(`client is not allowed response_type=${responseType}`);
      const scope = resolveScope(single(params, 'scope'), client.scope);
      const nonce = single(params, 'nonce');
      const authentication = parseAuthenticationParams(params);
      const loginHint = single(params, 'login_hint');
      const allowed = (s: string) => {
        try {
          return resolveScope(s, client.scope).length > 0;
        } catch {
          return false;
        }
      };
      const claims = scope.includes('openid') ? limitClaims(parseClaimsRequest(single(params, 'claims')), allowed) : undefined;
      // RFC 8707 §2: an unknown resource is invalid_target, answered at the verified redirect URI like the rest.
      const resources = resolveResources(requestedResources(params), allowedResources(client, this.deps.config.audience));
      let codeChallenge: string | undefined;
      let dpopJkt: string | undefined;
      if (responseType === 'code') {
        dpopJkt = single(params, 'dpop_jkt');
        if (dpopJkt !== undefined && !JKT.test(dpopJkt)) throw invalidRequest('malformed dpop_jkt (a base64url SHA-256 JWK thumbprint)');
        codeChallenge = single(params, 'code_challenge');
        const method = single(params, 'code_challenge_method');
        if (codeChallenge !== undefined) {
          // plain is not offered: it protects nothing against a leaked request (RFC 9700 §2.1.1).
          if (method !== 'S256') throw invalidRequest('code_challenge_method must be S256');
          if (!S256_CHALLENGE.test(codeChallenge)) throw invalidRequest('malformed code_challenge');
        } else if (method !== undefined) {
          throw invalidRequest('code_challenge_method without code_challenge');
        } else if (isPublic(client)) {
          throw invalidRequest('PKCE (code_challenge with S256) is required for public clients');
        }
      }
      return {
        client, redirectUri, redirectUriParam: redirectParam ?? null, responseType, scope, state, codeChallenge, nonce, authentication,
        ...(resources ? { resources } : {}), ...(dpopJkt ? { dpopJkt } : {}), ...(loginHint ? { loginHint } : {}), ...(claims ? { claims } : {}),
      };
    } catch (e) {
      throw withRedirect(e, { redirectUri, mode, state });
    }
  }

  /** Consent is skipped for trusted clients and for scopes the user already granted. */
  async needsConsent(req: AuthorizationRequest, userId: string): Promise<boolean> {
    if (req.client.trusted) return false;
    const consent = await this.deps.storage.consents.get(userId, req.client.id);
    return !consent || !isSubset(consentScope(req), consent.scope);
  }

  /**
   * The user approved: record the grant (and consent.granted when it adds
   * scopes for a client that asks for consent) and answer with a code or
   * (implicit) a token, in one transaction.
   */
  async approve(req: AuthorizationRequest, user: SignedInUser): Promise<string> {
    const { storage, clock } = this.deps;
    const now = clock.now();
    const before = req.client.trusted ? undefined : await storage.consents.get(user.id, req.client.id);
    const scope = consentScope(req);
    const adds = !req.client.trusted && scope.some((s) => !before?.scope.includes(s));
    return storage.transaction(async (tx) => {
      await tx.consents.grant(user.id, req.client.id, scope, now);
      if (adds) await recordEvent(tx, 'consent.granted', { user_id: user.id, client_id: req.client.id, client_name: req.client.name, scope }, now);
      return this.respond(tx, req, user, now);
    });
  }

  private async respond(storage: Stores, req: AuthorizationRequest, user: SignedInUser, now: number): Promise<string> {
    const { config, tokenIssuer } = this.deps;
    const mode = req.responseType === 'code' ? 'query' : 'fragment';
    if (req.responseType === 'code') {
      const code = randomToken();
      const familyId = newFamilyId(now);
      await storage.codes.save({
        codeHash: sha256(code), clientId: req.client.id, userId: user.id, redirectUri: req.redirectUriParam,
        scope: req.scope, codeChallenge: req.codeChallenge ?? null, codeChallengeMethod: req.codeChallenge ? 'S256' : null,
        nonce: req.nonce ?? null, familyId, authTime: user.authTime, createdAt: now,
        ...(req.resources ? { resources: req.resources } : {}),
        expiresAt: now + config.codeTtl * 1000, consumedAt: null, ...(req.dpopJkt ? { dpopJkt: req.dpopJkt } : {}),
      });
      // Single sign-on: remember which session signed in to this client, for single logout and ID tokens (src/core/oidc/sso.ts).
      if (user.sid) {
        // The claims request (OpenID Connect Core §5.5) travels with the sign-in: the ID token and UserInfo read it by family.
        await storage.signIns.record({ familyId, sid: user.sid, clientId: req.client.id, userId: user.id, authTime: user.authTime, createdAt: now, endedAt: null, claims: encodeClaims(req.claims), ...(user.amr ? { amr: user.amr } : {}) });
      }
      // RFC 9207: iss in the response defends against mix-up attacks.
      return buildRedirect(req.redirectUri, mode, { code, state: req.state, iss: config.issuer });
    }
    // RFC 6749 §4.2.2: no refresh token in the implicit grant.
    const { token, expiresIn } = await tokenIssuer.accessToken(storage, { client: req.client, userId: user.id, scope: req.scope, familyId: null, audience: req.resources });
    return buildRedirect(req.redirectUri, mode, {
      access_token: token, token_type: 'Bearer', expires_in: String(expiresIn), scope: formatScope(req.scope),
      state: req.state, iss: config.issuer,
    });
  }

  /** RFC 6749 §4.1.2.1 access_denied; consent.denied when a signed-in user refused. */
  async deny(req: AuthorizationRequest, userId?: string): Promise<string> {
    if (userId) {
      await recordEvent(this.deps.storage, 'consent.denied', { user_id: userId, client_id: req.client.id, client_name: req.client.name, scope: req.scope }, this.deps.clock.now());
    }
    return this.errorRedirect(accessDenied('the user denied the request'), {
      redirectUri: req.redirectUri, mode: req.responseType === 'code' ? 'query' : 'fragment', state: req.state,
    });
  }

  errorRedirect(err: GatehouseError, r: ErrorRedirect): string {
    return buildRedirect(r.redirectUri, r.mode, { error: err.code, error_description: err.description, state: r.state, iss: this.deps.config.issuer });
  }
}
