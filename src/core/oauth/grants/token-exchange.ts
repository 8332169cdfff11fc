import { invalidDpopProof, invalidRequest, invalidScope, invalidTarget, unauthorizedClient } from '../../errors.js';
import { isPublic } from '../../model.js';
import { required, single, type Params } from '../../params.js';
import { formatScope, isSubset, parseScope } from '../../scope.js';
import type { TokenInfo } from '../inspect.js';
import { allowedResources, requestedResources, resolveResources } from '../resource-indicators.js';
import { thumbprintsMatch } from '../mtls.js';
import { tokenTypeOf } from '../tokens.js';
import type { Grant } from './grant.js';

/**
 * OAuth 2.0 Token Exchange (RFC 8693), for clients registered with its grant
 * type. The subject token is an access token Gatehouse issued (JWT or
 * opaque), looked up as introspection does (one JWT verifier, the token
 * table, revocation and the grant's family); the new token is for the same
 * person, with the subject's scope or less, for the audience asked (RFC 8707
 * resources, the client's allowed set), and belongs to the subject's grant:
 * revoking that grant revokes it too. No refresh token is issued (§2.2.1).
 *
 * Who may exchange what (docs/security.md): a client exchanges tokens issued
 * to itself, or tokens addressed (`aud`) to a resource it lists in its own
 * `resources` (a resource server acting for the person downstream). An
 * `actor_token` (delegation, §1.1) must be one the client itself holds; the
 * new token then carries `act` naming the actor, with any earlier actor of
 * the subject token nested inside (§4.1).
 *
 * Sender constraints survive the exchange (RFC 8693 §5 leaves it to the
 * server; RFC 9449 §6 and RFC 8705 §3 say a bound token is useless without its
 * key): a subject or actor token bound to a DPoP key is exchanged only with a
 * proof by that key, one bound to a client certificate only over a connection
 * with that certificate, and the new token is bound to the same key or
 * certificate. It never outlives its subject token. Public clients may not
 * exchange unless the operator registered them with `--public-token-exchange`
 * (RFC 6749 §5.2 `unauthorized_client`).
 */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
/** §3: the token types accepted as subject and actor and issued; `jwt` is a JWT access token. */
const TOKEN_TYPES = new Set([ACCESS_TOKEN_TYPE, JWT_TYPE]);

/** Looks a token up as introspection does (src/core/oauth/inspect.ts). */
export type TokenLookup = (token: string) => Promise<TokenInfo | undefined>;

/** §2.1 `audience`: logical names; here an entry of the allowed set, as written or as a URI. */
function audiences(params: Params): string[] {
  const raw = params.audience;
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (list.length > 10) throw invalidTarget('at most 10 audience values');
  for (const a of list) if (!a || a.length > 2000) throw invalidTarget('audience must be 1 to 2000 characters');
  return list;
}

/**
 * A token bound to a DPoP key (`cnf.jkt`) or a certificate (`cnf.x5t#S256`)
 * may be presented only by whoever holds that key or certificate: the
 * request's proof (already verified, `dpopJkt`) and TLS certificate must match.
 */
function checkSender(info: TokenInfo, name: 'subject' | 'actor', dpopJkt: string | undefined, cert: string | undefined): void {
  if (info.dpopJkt !== undefined && !thumbprintsMatch(info.dpopJkt, dpopJkt)) {
    throw invalidDpopProof(`the ${name}_token is DPoP-bound: send a DPoP proof signed by its key`);
  }
  if (info.certThumbprint !== undefined && !thumbprintsMatch(info.certThumbprint, cert)) {
    throw invalidRequest(`the ${name}_token is bound to a client certificate: present that certificate`);
  }
}

/** Two bindings of one kind that name different keys cannot both be kept: refused. */
function oneBinding(a: string | undefined, b: string | undefined, what: string): string | undefined {
  if (a !== undefined && b !== undefined && a !== b) throw invalidRequest(`the subject and actor tokens are bound to different ${what}`);
  return a ?? b;
}

/** §2.2.2: a subject or actor token that is invalid, expired or of the wrong type is `invalid_request`. */
async function presented(lookup: TokenLookup, token: string, type: string, name: 'subject' | 'actor'): Promise<TokenInfo> {
  if (!TOKEN_TYPES.has(type)) throw invalidRequest(`unsupported ${name}_token_type ${type}`);
  const info = await lookup(token);
  if (!info || !info.active || info.kind !== 'access_token') throw invalidRequest(`the ${name}_token is not an active access token issued here`);
  if (type === JWT_TYPE && info.format !== 'jwt') throw invalidRequest(`the ${name}_token is not a JWT`);
  return info;
}

const asList = (aud: string | string[] | undefined): string[] => (aud === undefined ? [] : typeof aud === 'string' ? [aud] : aud);

export function tokenExchangeGrant(lookup: TokenLookup): Grant {
  return {
    grantType: TOKEN_EXCHANGE_GRANT,
    parameters: new Set(['subject_token', 'subject_token_type', 'actor_token', 'actor_token_type', 'requested_token_type', 'audience', 'resource', 'scope']),
    async handle({ client, params, dpopJkt, clientCertThumbprint }, { storage, tokenIssuer, config, clock }) {
      if (isPublic(client) && !client.publicTokenExchange) {
        throw unauthorizedClient('token exchange is for confidential clients (the operator may allow a public one: --public-token-exchange)');
      }
      const subjectToken = required(params, 'subject_token');
      const subjectType = required(params, 'subject_token_type');
      const actorToken = single(params, 'actor_token');
      const actorType = single(params, 'actor_token_type');
      // §2.1: actor_token_type is REQUIRED with an actor_token and MUST NOT come without one.
      if ((actorToken === undefined) !== (actorType === undefined)) throw invalidRequest('actor_token and actor_token_type go together');
      const requestedType = single(params, 'requested_token_type') ?? ACCESS_TOKEN_TYPE;
      if (!TOKEN_TYPES.has(requestedType)) throw invalidRequest(`unsupported requested_token_type ${requestedType}`);
      const requestedScope = parseScope(single(params, 'scope'));
      const allowed = allowedResources(client, config.audience);
      const targets = [...requestedResources(params), ...audiences(params)];
      const audience = resolveResources(targets, allowed);

      const subject = await presented(lookup, subjectToken, subjectType, 'subject');
      checkSender(subject, 'subject', dpopJkt, clientCertThumbprint);
      const own = subject.clientId === client.id;
      const addressedToClient = asList(subject.aud).some((a) => client.resources?.includes(a));
      if (!own && !addressedToClient) throw invalidRequest('the subject_token was neither issued to this client nor addressed to a resource it serves');
      let act: Record<string, unknown> | undefined;
      let actorCert: string | undefined;
      if (actorToken !== undefined) {
        const actor = await presented(lookup, actorToken, actorType!, 'actor');
        if (actor.clientId !== client.id) throw invalidRequest('the actor_token must be one issued to this client');
        checkSender(actor, 'actor', dpopJkt, clientCertThumbprint);
        actorCert = actor.certThumbprint;
        // §4.1: the current actor, with the chain of earlier ones (the subject token's act) nested.
        act = { sub: actor.userId ?? actor.clientId, client_id: actor.clientId, ...(subject.act ? { act: subject.act } : {}) };
      } else if (subject.act) {
        act = subject.act;
      }
      // Narrower only (§2.1 scope; RFC 6749 §3.3): never a scope the subject token does not hold.
      if (requestedScope.length && !isSubset(requestedScope, subject.scope)) throw invalidScope('the requested scope exceeds the subject token\'s');
      const scope = requestedScope.length ? requestedScope : subject.scope;
      const issuing = requestedType === JWT_TYPE ? { ...client, tokenFormat: 'jwt' as const } : client;
      // The new token stays bound: to the proof's key (checked equal to any DPoP-bound input above) and to the certificate.
      const certThumbprint = oneBinding(subject.certThumbprint, actorCert, 'certificates');
      // It ends no later than the subject token (whole seconds, as `exp` is).
      const notAfter = subject.exp * 1000;
      if (notAfter - clock.now() < 1000) throw invalidRequest('the subject_token is about to expire');
      const req = { client: issuing, userId: subject.userId, scope, familyId: subject.familyId, audience, act, dpopJkt, certThumbprint, notAfter };
      const issue = () => tokenIssuer.accessToken(storage, req);
      const { token, expiresIn } = issuing.tokenFormat === 'opaque' ? await storage.transaction((tx) => tokenIssuer.accessToken(tx, req)) : await issue();
      // §2.2.1: issued_token_type is REQUIRED; token_type says how to present it.
      return { access_token: token, issued_token_type: requestedType, token_type: tokenTypeOf(req), expires_in: expiresIn, scope: formatScope(scope) };
    },
  };
}
