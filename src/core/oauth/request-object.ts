import type { JWTHeaderParameters } from 'jose';
import { decodeProtectedHeader } from 'jose';
import { GatehouseError, invalidRequest } from '../errors.js';
import { ACCEPTED_ALGORITHMS, JwtRejected, verifyJwt, type VerificationKey } from '../jwt-verify.js';
import type { Client } from '../model.js';
import type { Clock } from '../ports.js';
import { single, type Params } from '../params.js';
import { REQUEST_URI_PREFIX } from './par.js';

/**
 * Request objects (JAR, RFC 9101; OpenID Connect Core §6.1): the
 * authorization request's parameters as the claims of a JWT passed by value
 * in `request`. Signed with one of the client's registered keys (`jwks` or
 * `jwks_uri`, resolved as for `private_key_jwt`) and checked by the one JWT
 * verifier; or unsigned (`alg: none`), which OpenID Connect Core §6.1 allows
 * and RFC 9101 does not, so only where nothing better is expected:
 *
 * - never at the PAR endpoint nor for a client that must push (FAPI 2.0, RFC 9126),
 * - never for a client that registered keys (it can sign, so an unsigned object
 *   claiming to be its own is refused rather than trusted).
 *
 * By reference (`request_uri` other than a pushed request's) is not served:
 * Gatehouse fetches nothing a request names (request_uri_not_supported).
 */
export const REQUEST_OBJECT_TYP = 'oauth-authz-req+jwt';
/** Discovery `request_object_signing_alg_values_supported`. */
export const REQUEST_OBJECT_ALGORITHMS: readonly string[] = ['none', ...ACCEPTED_ALGORITHMS];

/** Registered JWT claims: they describe the object, not the request (RFC 9101 §4). */
const JWT_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'jti', 'sub']);
const SKEW_SECONDS = 30;
const MAX_LENGTH = 16_384;

export const invalidRequestObject = (why: string) => new GatehouseError('invalid_request_object', why);

export interface RequestObjectDeps {
  /** The client's public key named by the header (src/core/oauth/client-assertion.ts). */
  keys(client: Client, header: JWTHeaderParameters): Promise<VerificationKey | undefined>;
  /** Our issuer: a signed object's `aud` (RFC 9101 §4, OpenID Connect Core §6.1). */
  issuer: string;
  clock: Clock;
}

/** A claim value as an authorization request parameter; undefined when it cannot be one. */
function asParam(name: string, v: unknown): string | string[] | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return String(v);
  // OpenID Connect Core §5.5: `claims` is a JSON object inside the request object.
  if (name === 'claims' && v !== null && typeof v === 'object' && !Array.isArray(v)) return JSON.stringify(v);
  // RFC 8707 `resource` may be repeated: an array of strings.
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v as string[];
  return undefined;
}

export class RequestObjects {
  constructor(private readonly deps: RequestObjectDeps) {}

  /**
   * The authorization request a request object stands for: its claims, and
   * the parameters sent beside it for what it does not say (OpenID Connect
   * Core §6.3.3: the object's values win). Throws `invalid_request_object`,
   * or `request_uri_not_supported`; the caller decides where the answer goes.
   */
  async resolve(client: Client, params: Params, opts: { pushed: boolean }): Promise<Params> {
    const request = single(params, 'request');
    const requestUri = single(params, 'request_uri');
    if (requestUri !== undefined) {
      if (request !== undefined) throw invalidRequest('request and request_uri cannot both be sent');
      // A pushed request's handle is expanded before (src/core/oauth/par.ts); anything else would be fetched.
      throw new GatehouseError('request_uri_not_supported', requestUri.startsWith(REQUEST_URI_PREFIX) ? 'request_uri is unknown' : 'only request_uri values from the pushed authorization request endpoint are accepted');
    }
    if (request === undefined) return params;
    const claims = await this.claims(client, request, opts.pushed);
    if (claims.client_id !== undefined && claims.client_id !== client.id) throw invalidRequestObject('client_id in the request object does not match the request');
    // No prototype: a claim named `__proto__` is a parameter like any other (and unknown ones are ignored later).
    const out = Object.create(null) as Params;
    for (const [k, v] of Object.entries(params)) if (k !== 'request') out[k] = v;
    for (const [k, v] of Object.entries(claims)) {
      if (JWT_CLAIMS.has(k)) continue;
      if (k === 'request' || k === 'request_uri') throw invalidRequestObject(`a request object cannot carry ${k}`);
      const value = asParam(k, v);
      if (value === undefined) throw invalidRequestObject(`request object claim ${k} is not a usable parameter value`);
      out[k] = value;
    }
    out.client_id = client.id;
    return out;
  }

  private async claims(client: Client, request: string, pushed: boolean): Promise<Record<string, unknown>> {
    if (request.length > MAX_LENGTH) throw invalidRequestObject('request object too long');
    let header: JWTHeaderParameters;
    try {
      header = decodeProtectedHeader(request) as JWTHeaderParameters;
    } catch {
      throw invalidRequestObject('the request object is not a JWT (an encrypted one is not accepted)');
    }
    // RFC 9101 §4: explicit typing when the client gives a type at all (RFC 8725 §3.11).
    if (header.typ !== undefined && !/^(application\/)?(oauth-authz-req\+jwt|jwt)$/i.test(header.typ)) throw invalidRequestObject(`request object typ ${header.typ} is not accepted`);
    if (header.alg === 'none') return this.unsigned(client, request, pushed);
    const now = this.deps.clock.now();
    try {
      const { claims } = await verifyJwt(request, {
        keys: (h) => this.deps.keys(client, h), issuer: client.id, audience: this.deps.issuer,
        algorithms: ACCEPTED_ALGORITHMS, clockTolerance: SKEW_SECONDS, now,
      });
      return claims;
    } catch (e) {
      if (e instanceof JwtRejected) throw invalidRequestObject(`the request object was refused (${e.reason}): signed by a registered key of the client, iss the client_id, aud the issuer`);
      throw e;
    }
  }

  private unsigned(client: Client, request: string, pushed: boolean): Record<string, unknown> {
    if (pushed || client.requirePar) throw invalidRequestObject('request objects sent with pushed authorization requests must be signed');
    if (client.jwks || client.jwksUri) throw invalidRequestObject('this client registered signing keys: its request objects must be signed');
    const [, payload, signature, extra] = request.split('.');
    if (signature !== '' || extra !== undefined || !payload) throw invalidRequestObject('an unsigned request object has an empty signature');
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalidRequestObject('the request object payload is not JSON');
    }
    if (!claims || typeof claims !== 'object' || Array.isArray(claims)) throw invalidRequestObject('the request object payload is not a JSON object');
    const c = claims as Record<string, unknown>;
    const now = this.deps.clock.now() / 1000;
    if (typeof c.exp === 'number' && c.exp + SKEW_SECONDS < now) throw invalidRequestObject('the request object has expired');
    if (typeof c.nbf === 'number' && c.nbf - SKEW_SECONDS > now) throw invalidRequestObject('the request object is not valid yet');
    return c;
  }
}
