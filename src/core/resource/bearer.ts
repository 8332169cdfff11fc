import { invalidRequest } from '../errors.js';
import type { Params } from '../params.js';
import { missingToken } from './errors.js';

/** What the resource server needs of an HTTP request to find its access token. */
export interface BearerRequest {
  /** `x5t#S256` of the TLS client certificate on the connection, for certificate-bound tokens (RFC 8705). */
  clientCertThumbprint?: string;
  method: string;
  authorization: string | undefined;
  contentType: string | undefined;
  /** Parsed query string; a repeated name is an array. */
  query: Params | undefined;
  /** Parsed body, when there is one. */
  body: unknown;
  /** RFC 9449 §7.1: the `DPoP` header, and the absolute URL the client sent the request to (its `htu`). */
  dpop?: string | readonly string[] | undefined;
  url?: string | undefined;
}

/** The access token and the scheme it came with: `DPoP` only in the Authorization header (RFC 9449 §7.1). */
export interface PresentedToken {
  token: string;
  scheme: 'Bearer' | 'DPoP';
}

/** RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=". */
const BEARER_HEADER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** RFC 9449 §7.1: the same token68 after the DPoP scheme. */
const DPOP_HEADER = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i;
const SCHEME = /^([A-Za-z0-9!#$%&'*+\-.^_`|~]+)(?: |$)/;

function param(params: Params | undefined, where: string): string | undefined {
  const v = params?.access_token;
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalidRequest(`access_token is repeated in the ${where}`);
  if (v === '') throw invalidRequest(`access_token in the ${where} is empty`);
  return v;
}

/** RFC 6750 §2.2: only a single-part form body of a method that has one (never GET). */
function formBody(req: BearerRequest): Params | undefined {
  const method = req.method.toUpperCase();
  if (method === 'GET' || method === 'HEAD') return undefined;
  const type = req.contentType?.split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return undefined;
  return req.body && typeof req.body === 'object' ? (req.body as Params) : undefined;
}

/**
 * Finds the access token: `Authorization: Bearer` (§2.1), the `access_token`
 * form field (§2.2) or query parameter (§2.3). Using more than one method is
 * `invalid_request` (§2: "MUST NOT use more than one method"). An
 * `Authorization` header of another scheme is not a bearer credential and is
 * left alone; no token at all is `missingToken()`.
 */
export function extractBearerToken(req: BearerRequest): string {
  const found: string[] = [];
  const header = req.authorization;
  if (header !== undefined && SCHEME.exec(header)?.[1]!.toLowerCase() === 'bearer') {
    const m = BEARER_HEADER.exec(header);
    if (!m) throw invalidRequest('malformed Authorization: Bearer header');
    found.push(m[1]!);
  }
  const fromBody = param(formBody(req), 'form body');
  if (fromBody !== undefined) found.push(fromBody);
  const fromQuery = param(req.query, 'query');
  if (fromQuery !== undefined) found.push(fromQuery);
  if (found.length > 1) throw invalidRequest('the access token was sent by more than one method (RFC 6750 §2)');
  if (found.length === 0) throw missingToken();
  return found[0]!;
}

/**
 * Finds the access token as a resource that also accepts DPoP does
 * (RFC 9449 §7.1): `Authorization: DPoP <token>`, else every way of RFC 6750
 * (`extractBearerToken`). A DPoP token sent along with another method is
 * `invalid_request`, as two bearer methods are.
 */
export function extractAccessToken(req: BearerRequest): PresentedToken {
  const header = req.authorization;
  if (header === undefined || SCHEME.exec(header)?.[1]!.toLowerCase() !== 'dpop') return { token: extractBearerToken(req), scheme: 'Bearer' };
  const m = DPOP_HEADER.exec(header);
  if (!m) throw invalidRequest('malformed Authorization: DPoP header');
  if (param(formBody(req), 'form body') !== undefined || param(req.query, 'query') !== undefined) {
    throw invalidRequest('the access token was sent by more than one method (RFC 6750 §2)');
  }
  return { token: m[1]!, scheme: 'DPoP' };
}
