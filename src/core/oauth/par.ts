import { randomToken, sha256 } from '../crypto.js';
import { GatehouseError, invalidRequest } from '../errors.js';
import type { Client } from '../model.js';
import type { Clock, ClientStore } from '../ports.js';
import { single, type Params } from '../params.js';

/**
 * Pushed authorization requests (RFC 9126): the client sends the
 * authorization request's parameters to the server directly, authenticated
 * as at the token endpoint, and the browser carries only an opaque
 * `request_uri`. Nothing in the front channel can then change the request,
 * and only its one client can use it.
 */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
export const PAR_PATH = '/oauth/par';

/** At most this long (RFC 9126 §2.2: short-lived; the setting is capped at 600 s). */
export const PAR_TTL_MAX = 600;

/** Where pushed requests wait, by the SHA-256 of their `request_uri` (a leaked table holds no usable handle). */
export interface PushedRequestStore {
  push(request: { uriHash: string; clientId: string; params: Params; expiresAt: number }): Promise<void>;
  /** The request, while unexpired and not consumed. */
  peek(uriHash: string, now: number): Promise<{ clientId: string; params: Params } | undefined>;
  /** Consumes it: true for exactly one caller, across processes (one conditional DELETE). */
  consume(uriHash: string, now: number): Promise<boolean>;
}

/** Parameters that authenticate the client at the PAR endpoint; they are not part of the authorization request. */
const CLIENT_AUTH_PARAMS = new Set(['client_secret', 'client_assertion', 'client_assertion_type']);

export interface PushedRequest {
  /** The authorization request's parameters: the pushed ones, or the ones sent. */
  params: Params;
  /** Set when the request was pushed: the handle, and its hash for consuming it. */
  requestUri?: string;
  uriHash?: string;
}

export interface PushedAuthorizationDeps {
  store: PushedRequestStore;
  clients: ClientStore;
  clock: Clock;
  /** `GATEHOUSE_PAR_TTL`, seconds. */
  ttlSeconds: number;
  /** `GATEHOUSE_PAR_REQUIRED`: every client must push its requests (RFC 9126 §5). */
  required: boolean;
  /** Checks an authorization request as the authorization endpoint would; throws its error. */
  validate(params: Params): Promise<unknown>;
  /** RFC 9126 §3: a request object (RFC 9101) pushed, replaced by the request it carries (signed only). */
  requestObject?(client: Client, params: Params): Promise<Params>;
}

const gone = () => invalidRequest('request_uri is unknown, expired or already used');

export class PushedAuthorization {
  constructor(private readonly deps: PushedAuthorizationDeps) {}

  get required(): boolean {
    return this.deps.required;
  }

  /**
   * RFC 9126 §2: validates the request as the authorization endpoint will
   * (client, redirect URI, response type, scope, PKCE…) so that errors reach
   * the client here, and stores it. `client` is already authenticated.
   */
  async push(client: Client, params: Params): Promise<{ request_uri: string; expires_in: number }> {
    // §2.1: a request_uri cannot itself be pushed.
    if (params.request_uri !== undefined) throw invalidRequest('request_uri must not be sent to the pushed authorization request endpoint');
    const clientId = single(params, 'client_id');
    if (clientId !== undefined && clientId !== client.id) throw invalidRequest('client_id does not match the authenticated client');
    // No prototype: parameter names come from the request.
    let request = Object.create(null) as Params;
    for (const [k, v] of Object.entries(params)) if (!CLIENT_AUTH_PARAMS.has(k)) request[k] = v;
    request.client_id = client.id;
    // §3: a pushed request object is verified here and stored as the request it carries.
    if (request.request !== undefined) {
      if (!this.deps.requestObject) throw new GatehouseError('request_not_supported', 'request objects are not supported');
      request = await this.deps.requestObject(client, request);
    }
    try {
      await this.deps.validate(request);
    } catch (e) {
      // The authorization endpoint would answer at the redirect URI; here the client is answered directly (§2.3).
      throw (e as { oauth?: unknown })?.oauth ?? e;
    }
    const handle = `${REQUEST_URI_PREFIX}${randomToken(32)}`;
    const now = this.deps.clock.now();
    await this.deps.store.push({ uriHash: sha256(handle), clientId: client.id, params: request, expiresAt: now + this.deps.ttlSeconds * 1000 });
    return { request_uri: handle, expires_in: this.deps.ttlSeconds };
  }

  /**
   * At the authorization endpoint (RFC 9126 §4): a `request_uri` is replaced
   * by the parameters pushed under it (any others sent beside it are
   * ignored); without one, a client that must push (its registration or the
   * deployment says so) is refused.
   */
  async expand(params: Params): Promise<PushedRequest> {
    const requestUri = single(params, 'request_uri');
    const clientId = single(params, 'client_id');
    if (requestUri === undefined) {
      if (clientId !== undefined && (this.deps.required || (await this.deps.clients.get(clientId))?.requirePar)) {
        throw invalidRequest('this client must push its authorization requests (RFC 9126) and send only client_id and request_uri');
      }
      return { params };
    }
    // Not a handle of ours: the authorization endpoint answers request_uri_not_supported at the client (src/core/oauth/request-object.ts).
    if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return { params };
    if (requestUri.length > 200) throw invalidRequest('malformed request_uri');
    if (clientId === undefined) throw invalidRequest('missing client_id');
    const uriHash = sha256(requestUri);
    const pushed = await this.deps.store.peek(uriHash, this.deps.clock.now());
    // Another client's handle is as good as none: nothing says whose it is.
    if (!pushed || pushed.clientId !== clientId) throw gone();
    return { params: pushed.params, requestUri, uriHash };
  }

  /**
   * Ends the pushed request when the authorization response is given: one
   * decision per `request_uri` (§4: one-time use; showing the page again
   * before deciding, as a reload does, is allowed).
   */
  async consume(request: PushedRequest): Promise<void> {
    if (request.uriHash && !(await this.deps.store.consume(request.uriHash, this.deps.clock.now()))) throw gone();
  }
}

/** RFC 9126 §5 metadata. */
export function parMetadata(issuer: string, required: boolean): Record<string, unknown> {
  return {
    pushed_authorization_request_endpoint: `${issuer}${PAR_PATH}`,
    require_pushed_authorization_requests: required,
  };
}
