import type { Client } from '../model.js';
import type { Clock, ClientStore } from '../ports.js';

/** The chat page's OAuth client: public (PKCE, RFC 7636), first-party (no consent page), scope chat. */
export const CHAT_PAGE_CLIENT_ID = 'gatehouse-chat';

export const chatRedirectUri = (botUrl: string) => `${botUrl}/callback`;

/**
 * Registers the chat page as a client on first start, and keeps its
 * redirect URI in step with {bot_api_url} (which changes with port 0).
 */
export async function ensureChatPageClient(deps: { clients: ClientStore; clock: Clock }, botUrl: string): Promise<void> {
  const redirect = chatRedirectUri(botUrl);
  const existing = await deps.clients.get(CHAT_PAGE_CLIENT_ID);
  if (existing) {
    if (!existing.redirectUris.includes(redirect)) await deps.clients.update(CHAT_PAGE_CLIENT_ID, { redirectUris: [redirect] });
    return;
  }
  // Fields added to Client later (logout settings) get their empty defaults.
  const client = {
    id: CHAT_PAGE_CLIENT_ID,
    name: 'Gatehouse Chat',
    secretHash: null,
    previousSecretHash: null,
    previousSecretExpiresAt: null,
    redirectUris: [redirect],
    grantTypes: ['authorization_code', 'refresh_token'],
    scope: ['chat'],
    authMethod: 'none',
    trusted: true,
    introspect: false,
    domain: null,
    tokenFormat: 'jwt',
    createdAt: deps.clock.now(),
    postLogoutRedirectUris: [],
    backchannelLogoutUri: null,
  } as unknown as Client;
  try {
    await deps.clients.create(client);
  } catch {
    // Another process registered it at the same moment.
  }
}
