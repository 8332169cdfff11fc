import { single } from '../../params.js';
import { resolveScope } from '../../scope.js';
import { wouldRecord } from '../../notify/record.js';
import type { Grant } from './grant.js';

/** RFC 6749 §4.4. No refresh token (§4.4.3): the client can always ask again. */
export const clientCredentialsGrant: Grant = {
  grantType: 'client_credentials',
  parameters: new Set(['scope']),
  async handle({ client, params }, { storage, issuer }) {
    const scope = resolveScope(single(params, 'scope'), client.scope);
    const req = { client, userId: null, scope, familyId: null };
    // A transaction only when token.issued is recorded, so the token and its event commit together.
    if (wouldRecord(storage, 'token.issued')) return storage.transaction((tx) => issuer.respond(tx, req, false));
    return issuer.respond(storage, req, false);
  },
};
