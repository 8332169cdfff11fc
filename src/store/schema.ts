/** Table shapes as kysely sees them. Times are Unix milliseconds (bigint), flags 0/1. */
export interface ClientsTable {
  id: string;
  name: string;
  secret_hash: string | null;
  previous_secret_hash: string | null;
  previous_secret_expires_at: number | null;
  redirect_uris: string; // JSON array
  grant_types: string; // space-separated
  scope: string; // space-separated
  auth_method: string;
  trusted: number;
  introspect: number;
  domain: string | null;
  token_format: string;
  created_at: number;
}

export interface UsersTable {
  id: string;
  username: string;
  username_lower: string;
  email: string;
  name: string | null;
  password_hash: string;
  created_at: number;
}

export interface AuthorizationCodesTable {
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string | null;
  scope: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  nonce: string | null;
  family_id: string;
  auth_time: number;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface TokenFamiliesTable {
  id: string;
  client_id: string;
  user_id: string | null;
  scope: string;
  created_at: number;
  revoked_at: number | null;
}

export interface RefreshTokensTable {
  token_hash: string;
  family_id: string;
  client_id: string;
  user_id: string | null;
  scope: string;
  created_at: number;
  expires_at: number;
  rotated_at: number | null;
  revoked_at: number | null;
}

export interface AccessTokensTable {
  token_hash: string;
  jti: string;
  family_id: string | null;
  client_id: string;
  user_id: string | null;
  scope: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface RevokedJtisTable {
  jti: string;
  expires_at: number;
}

export interface ConsentsTable {
  user_id: string;
  client_id: string;
  scope: string;
  created_at: number;
  updated_at: number;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  private_key_pem: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
  expires_at: number | null;
}

export interface SessionsTable {
  id_hash: string;
  user_id: string;
  auth_time: number;
  created_at: number;
  expires_at: number;
}

export interface RateLimitsTable {
  key: string;
  count: number;
  expires_at: number;
}

export interface DB {
  clients: ClientsTable;
  users: UsersTable;
  authorization_codes: AuthorizationCodesTable;
  token_families: TokenFamiliesTable;
  refresh_tokens: RefreshTokensTable;
  access_tokens: AccessTokensTable;
  revoked_jtis: RevokedJtisTable;
  consents: ConsentsTable;
  signing_keys: SigningKeysTable;
  sessions: SessionsTable;
  rate_limits: RateLimitsTable;
}

/* Notifications outbox (migration 0003_notify); merged into DB below. */
export interface NotifyEventsTable {
  id: string;
  type: string;
  version: number;
  user_id: string | null;
  data: string; // JSON
  created_at: number;
}

export interface WebhookEndpointsTable {
  id: string;
  kind: string;
  url: string | null;
  chat_id: string | null;
  user_id: string | null;
  event_types: string; // space-separated
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  ordered: number;
  disabled_at: number | null;
  disabled_reason: string | null;
  failing_since: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookSubscriptionsTable {
  event_type: string;
  endpoint_id: string;
}

export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  event_id: string;
  status: string;
  attempts: number;
  retry_base: number;
  next_attempt_at: number;
  lease_until: number | null;
  lease_owner: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  endpoint_id: string;
  event_id: string;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response: string | null;
  ok: number;
}

export interface DB {
  notify_events: NotifyEventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

/* Third-party login and application-level access (migration 0005_federation); merged into the tables above. */
export interface ClientsTable {
  tls_cert_thumbprint: string | null;
  allowed_addresses: string | null; // space-separated CIDR blocks
}

export interface AccessTokensTable {
  cnf_x5t: string | null;
}

export interface ExternalIdentitiesTable {
  provider: string;
  subject: string;
  user_id: string;
  created_at: number;
  last_login_at: number;
}

export interface FederationFlowsTable {
  id_hash: string;
  data: string; // JSON
  expires_at: number;
}

export interface DB {
  external_identities: ExternalIdentitiesTable;
  federation_flows: FederationFlowsTable;
}

/* OpenID Connect and single sign-on (migration 0004_oidc); merged into DB below. */
export interface ClientsTable {
  post_logout_redirect_uris: string; // JSON array
  backchannel_logout_uri: string | null;
}

export interface SessionsTable {
  sid: string | null;
  user_agent: string | null;
}

export interface SsoSignInsTable {
  family_id: string;
  sid: string;
  client_id: string;
  user_id: string;
  auth_time: number;
  created_at: number;
  ended_at: number | null;
  /** 0026: the OpenID Connect claims request (JSON), null when none. */
  claims: string | null;
}

export interface DB {
  sso_sign_ins: SsoSignInsTable;
}

/* Encrypted secrets (migration 0006_secrets): the check row of the secret key. */
export interface SecretKeyCheckTable {
  id: string;
  sealed: string;
}

export interface DB {
  secret_key_check: SecretKeyCheckTable;
}

/* The current generation of OAuth (migration 0008_oauth_current); merged into the tables above. */
export interface ClientsTable {
  id_token_alg: string | null;
  require_par: number | null;
  jwks: string | null; // JSON JWK Set
  jwks_uri: string | null;
  jwt_secret: string | null; // sealed (src/store/secrets/sealed.ts)
}

export interface PushedRequestsTable {
  uri_hash: string;
  client_id: string;
  params: string; // JSON object
  expires_at: number;
}

export interface ReplayJtisTable {
  key: string;
  expires_at: number;
}

export interface DB {
  pushed_requests: PushedRequestsTable;
  replay_jtis: ReplayJtisTable;
}

/* DPoP, RFC 9449 (migration 0012_dpop); merged into the tables above. */
export interface ClientsTable {
  dpop_bound_access_tokens: number | null;
  /** 0023: the operator lets this public client use token exchange (RFC 8693). */
  public_token_exchange: number | null;
}

export interface AuthorizationCodesTable {
  dpop_jkt: string | null;
}

export interface RefreshTokensTable {
  cnf_jkt: string | null;
}

export interface AccessTokensTable {
  cnf_jkt: string | null;
}

/* Device authorization and CIBA (migration 0013_backchannel); merged into the tables above. */
export interface ClientsTable {
  backchannel_token_delivery_mode: string | null;
  backchannel_client_notification_endpoint: string | null;
}

export interface BackchannelRequestsTable {
  id: string;
  kind: string;
  secret_hash: string;
  user_code_hash: string | null;
  client_id: string;
  scope: string;
  user_id: string | null;
  status: string;
  decided_at: number | null;
  binding_message: string | null;
  notification_token: string | null;
  interval_s: number;
  last_poll_at: number | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface DB {
  backchannel_requests: BackchannelRequestsTable;
}

/* E-mail through the outbox (migration 0027_mail); merged into DB above. */
export interface MailMessagesTable {
  /** The outbox row (`notify_events.id`) the message is delivered as. */
  id: string;
  /** JSON of the message (recipient, template, data), sealed: src/store/secrets/sealed.ts MAIL_MESSAGE. */
  message: string;
  created_at: number;
}

export interface DB {
  mail_messages: MailMessagesTable;
}

/* One-time chat-link codes (migration 0024_notify_link_codes); merged into the tables above. */
export interface NotifyLinkCodesTable {
  code_hash: string;
  user_id: string;
  expires_at: number;
}

export interface DB {
  notify_link_codes: NotifyLinkCodesTable;
}
