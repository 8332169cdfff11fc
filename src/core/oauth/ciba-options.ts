import type { Client } from '../model.js';

/** The CIBA grant type (OpenID Connect CIBA Core 1.0 §10.1). */
export const CIBA_GRANT_TYPE = 'urn:openid:params:grant-type:ciba';
/** CIBA Core §4: Gatehouse serves poll and ping; push is not offered. */
export const CIBA_DELIVERY_MODES = ['poll', 'ping'] as const;
export type CibaDeliveryMode = (typeof CIBA_DELIVERY_MODES)[number];

export interface CibaClientInput {
  /** CIBA Core §4 `backchannel_token_delivery_mode`. */
  backchannelTokenDeliveryMode?: string | undefined;
  /** CIBA Core §4 `backchannel_client_notification_endpoint` (ping mode). */
  backchannelNotificationEndpoint?: string | undefined;
}

export type CibaClientFields = Pick<Client, 'backchannelTokenDeliveryMode' | 'backchannelNotificationEndpoint'>;

/**
 * Validates a client's CIBA settings: ping needs an https (or, for local
 * testing, http) notification endpoint, which is called through the outbound
 * module's SSRF guard; poll takes none. Returns the fields, or the problem.
 */
export function cibaClientOptions(input: CibaClientInput): CibaClientFields | string {
  const mode = input.backchannelTokenDeliveryMode?.trim();
  const endpoint = input.backchannelNotificationEndpoint?.trim();
  if (!mode) return endpoint ? 'backchannel_client_notification_endpoint needs --backchannel-token-delivery-mode ping' : {};
  if (!(CIBA_DELIVERY_MODES as readonly string[]).includes(mode)) return `backchannel token delivery mode must be one of ${CIBA_DELIVERY_MODES.join(', ')}`;
  if (mode === 'poll') {
    if (endpoint) return 'a notification endpoint is for ping mode only';
    return { backchannelTokenDeliveryMode: 'poll' };
  }
  if (!endpoint) return 'ping mode needs --backchannel-notification-endpoint';
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    return 'the backchannel notification endpoint must be an absolute http(s) URL';
  }
  // CIBA Core §4 asks for https; plain http is accepted for loopback development like redirect URIs, the SSRF guard still applies.
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password || u.hash || endpoint.length > 2000) {
    return 'the backchannel notification endpoint must be an absolute http(s) URL without credentials or fragment';
  }
  return { backchannelTokenDeliveryMode: 'ping', backchannelNotificationEndpoint: endpoint };
}

/** RFC 8628 §4 and CIBA Core §4 authorization server metadata. */
export function backchannelMetadata(issuer: string): Record<string, unknown> {
  return {
    device_authorization_endpoint: `${issuer}/oauth/device_authorization`,
    backchannel_authentication_endpoint: `${issuer}/oauth/bc-authorize`,
    backchannel_token_delivery_modes_supported: [...CIBA_DELIVERY_MODES],
    backchannel_user_code_parameter_supported: false,
  };
}
