import { newFamilyId } from '../token-key.js';
import type { Client } from '../../model.js';
import { required } from '../../params.js';
import type { BackchannelRequest } from '../device-ports.js';
import { DEVICE_GRANT_TYPE, type DeviceFlow } from '../device.js';
import type { TokenResponse } from '../tokens.js';
import { mayRefresh, type Grant, type GrantDeps } from './grant.js';

/**
 * Tokens for a request the person approved away from the client (device or
 * CIBA): a new grant family, refresh token when the client may refresh, and
 * an ID token for `openid` attesting the approval as the authentication.
 */
export async function issueForApproved(r: BackchannelRequest, client: Client, deps: Pick<GrantDeps, 'storage' | 'clock' | 'tokenIssuer' | 'idTokens'>): Promise<TokenResponse> {
  const userId = r.userId!;
  const now = deps.clock.now();
  const familyId = newFamilyId(now);
  return deps.storage.transaction(async (tx) => {
    await tx.tokens.createFamily({ id: familyId, clientId: client.id, userId, scope: r.scope, createdAt: now, revokedAt: null });
    await tx.consents.grant(userId, client.id, r.scope, now);
    const response = await deps.tokenIssuer.respond(tx, { client, userId, scope: r.scope, familyId }, mayRefresh(client));
    await deps.idTokens?.attach(tx, response, { client, userId, scope: r.scope, familyId, nonce: null, authTime: r.decidedAt ?? now });
    return response;
  });
}

/** RFC 8628 §3.4: `grant_type=urn:ietf:params:oauth:grant-type:device_code` with the `device_code`. */
export function deviceCodeGrant(flow: DeviceFlow): Grant {
  return {
    grantType: DEVICE_GRANT_TYPE,
    parameters: new Set(['device_code']),
    async handle({ client, params }, deps) {
      const deviceCode = required(params, 'device_code');
      const request = await flow.poll(client, deviceCode.slice(0, 200));
      return issueForApproved(request, client, deps);
    },
  };
}
