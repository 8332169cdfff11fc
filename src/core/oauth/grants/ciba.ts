import { required } from '../../params.js';
import type { Ciba } from '../ciba.js';
import { CIBA_GRANT_TYPE } from '../ciba-options.js';
import { issueForApproved } from './device-code.js';
import type { Grant } from './grant.js';

/** CIBA Core §10.1: `grant_type=urn:openid:params:grant-type:ciba` with the `auth_req_id`, poll and ping modes. */
export function cibaGrant(ciba: Ciba): Grant {
  return {
    grantType: CIBA_GRANT_TYPE,
    parameters: new Set(['auth_req_id']),
    async handle({ client, params }, deps) {
      const authReqId = required(params, 'auth_req_id');
      const request = await ciba.poll(client, authReqId.slice(0, 200));
      return issueForApproved(request, client, deps);
    },
  };
}
