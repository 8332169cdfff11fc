import { single } from '../../params.js';
import { resolveScope } from '../../scope.js';
import { wouldRecord } from '../../notify/record.js';
import type { Grant } from './grant.js';

/** RFC 6749 §4.4. No refresh token (§4.4.3): the client can always ask again. */
export const clientCredentialsGrant: Grant = {
  grantType: 'client_credentials',
  parameters: new Set(['scope']),
  async handle({ client, params, dpopJkt }, { storage, tokenIssuer }) {
    const scope = resolveScope(single(params, 'scope'), client.scope);
    const req = { client, userId: null, scope, familyId: null, dpopJkt };
    // An opaque token and its token.issued event commit together. A JWT is not stored: its event is
    // the only write, group-committed with those of concurrent requests before the answer is sent.
    if (client.tokenFormat === 'opaque' && (await wouldRecord(storage, 'token.issued'))) return storage.transaction((tx) => tokenIssuer.respond(tx, req, false));
    return tokenIssuer.respond(storage, req, false);
  },
};
