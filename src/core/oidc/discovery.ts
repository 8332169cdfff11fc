import { USERINFO_CLAIMS } from './userinfo.js';
import { PROMPT_VALUES } from './prompt.js';
import { ACR_LEVELS } from './acr.js';
import { ID_TOKEN_ALGORITHMS } from './id-token.js';
import { REQUEST_OBJECT_ALGORITHMS } from '../oauth/request-object.js';

export const USERINFO_PATH = '/userinfo';
export const END_SESSION_PATH = '/session/end';

/**
 * OpenID Connect Discovery 1.0 §3: the RFC 8414 metadata plus what an
 * OpenID relying party looks for. Only what is served is advertised:
 * ES256- or RS256-signed ID tokens, public subject identifiers, RP-initiated and
 * back-channel logout, request objects by value (RFC 9101; unsigned only where
 * src/core/oauth/request-object.ts allows), the claims parameter (Core §5.5);
 * no request objects by reference, no front-channel logout.
 */
export function openIdConfiguration(oauthMetadata: Record<string, unknown>, issuer: string): Record<string, unknown> {
  return {
    ...oauthMetadata,
    userinfo_endpoint: `${issuer}${USERINFO_PATH}`,
    end_session_endpoint: `${issuer}${END_SESSION_PATH}`,
    scopes_supported: ['openid', 'profile', 'email', 'offline_access', 'groups', 'roles'],
    subject_types_supported: ['public'],
    // Discovery §3: RS256 MUST be listed; ES256 is the default, RS256 per client.
    id_token_signing_alg_values_supported: [...ID_TOKEN_ALGORITHMS],
    claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'sid', 'acr', 'amr', ...USERINFO_CLAIMS.filter((c) => c !== 'sub')],
    claim_types_supported: ['normal'],
    // Issue 28: the levels `acr_values` may ask for, lowest first (src/core/oidc/acr.ts).
    acr_values_supported: [...ACR_LEVELS],
    prompt_values_supported: [...PROMPT_VALUES],
    claims_parameter_supported: true,
    request_parameter_supported: true,
    request_object_signing_alg_values_supported: [...REQUEST_OBJECT_ALGORITHMS],
    // Discovery §3: the default is true, so say so when unsupported.
    request_uri_parameter_supported: false,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    frontchannel_logout_supported: false,
  };
}
