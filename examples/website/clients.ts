import { createClient, createUser } from '../../src/core/admin.js';
import type { Gatehouse } from '../../src/gatehouse.js';

export const DEMO_USER = { username: 'alice', password: 'correct horse battery staple', email: 'alice@example.com', name: 'Alice Liddell' };

/**
 * The two registrations the sample site needs. The implicit page is a public
 * (native-style) client, whose loopback port may vary (RFC 8252 §7.3); the
 * site's server is a confidential client, matched exactly, port included
 * (RFC 9700 §2.1): `useSiteUrl` sets its redirect URI once the site listens.
 */
export async function registerSampleClients(gh: Gatehouse, host = '127.0.0.1') {
  const site = await createClient(gh.storage, gh.clock, {
    name: 'Sample site', redirectUris: [`http://${host}/callback`], grantTypes: ['authorization_code', 'refresh_token'], scope: 'user profile email',
  });
  const implicit = await createClient(gh.storage, gh.clock, {
    name: 'Sample site (implicit page)', redirectUris: [`http://${host}/implicit/callback`], grantTypes: ['implicit'], public: true, scope: 'user profile email',
  });
  return { clientId: site.client.id, clientSecret: site.secret!, implicitClientId: implicit.client.id };
}

/** Registers the site's callback at the URL it actually listens on (its port is known only then). */
export async function useSiteUrl(gh: Gatehouse, clientId: string, siteUrl: string): Promise<void> {
  await gh.storage.clients.update(clientId, { redirectUris: [`${siteUrl}/callback`] });
}

/** The person who signs in; skipped when the database already has her. */
export async function ensureDemoUser(gh: Gatehouse): Promise<void> {
  if (await gh.storage.users.findByUsername(DEMO_USER.username)) return;
  await createUser(gh.storage, gh.hasher, gh.clock, DEMO_USER);
}
