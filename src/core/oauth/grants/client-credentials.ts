import { single } from '../../params.js';
import { resolveScope } from '../../scope.js';
import type { Grant } from './grant.js';

/** RFC 6749 §4.4. No refresh token (§4.4.3): the client can always ask again. */
export const clientCredentialsGrant: Grant = {
  grantType: 'client_credentials',
  parameters: new Set(['scope']),
  async handle({ client, params }, { storage, issuer }) {
    const scope = resolveScope(single(params, 'scope'), client.scope);
    return issuer.respond(storage, { client, userId: null, scope, familyId: null }, false);
  },
};
