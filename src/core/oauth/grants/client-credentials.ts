import { single } from '../../params.js';
import { resolveScope } from '../../scope.js';
import { wouldRecord } from '../../notify/record.js';
import type { Grant } from './grant.js';
import { allowedResources, requestedResources, resolveResources } from '../resource-indicators.js';

/** RFC 6749 §4.4. No refresh token (§4.4.3): the client can always ask again. */
export const clientCredentialsGrant: Grant = {
  grantType: 'client_credentials',
  parameters: new Set(['scope', 'resource']),
  async handle({ client, params, dpopJkt }, { storage, tokenIssuer, config }) {
    const scope = resolveScope(single(params, 'scope'), client.scope);
    // RFC 8707 §2.2: the token is for the resources named, each one the client may get tokens for.
    const audience = resolveResources(requestedResources(params), allowedResources(client, config.audience));
    const req = { client, userId: null, scope, familyId: null, audience, dpopJkt };
    // An opaque token and its token.issued event commit together. A JWT is not stored: its event is
    // the only write, group-committed with those of concurrent requests before the answer is sent.
    if (client.tokenFormat === 'opaque' && (await wouldRecord(storage, 'token.issued'))) return storage.transaction((tx) => tokenIssuer.respond(tx, req, false));
    return tokenIssuer.respond(storage, req, false);
  },
};
