import { createClient } from '../../src/core/admin.js';
import type { Gatehouse } from '../../src/gatehouse.js';

/**
 * Registers one example site the way `gatehouse client create` would, with
 * exact addresses on its own origin:
 *
 *   gatehouse client create --name Bookshop --trusted --scope "openid profile email" \
 *     --redirect-uri http://127.0.0.1:3001/callback \
 *     --post-logout-redirect-uri http://127.0.0.1:3001/signed-out \
 *     --backchannel-logout-uri http://127.0.0.1:3001/backchannel-logout
 *
 * `--trusted`: the sites are the deployment's own (first-party), so no consent
 * page; single sign-on then needs no click at all on the second site.
 */
export async function registerSsoSite(gh: Gatehouse, name: string, siteUrl: string): Promise<{ clientId: string; clientSecret: string }> {
  const { client, secret } = await createClient(gh.storage, gh.clock, {
    name,
    redirectUris: [`${siteUrl}/callback`],
    grantTypes: ['authorization_code', 'refresh_token'],
    scope: 'openid profile email',
    trusted: true,
    postLogoutRedirectUris: [`${siteUrl}/signed-out`],
    backchannelLogoutUri: `${siteUrl}/backchannel-logout`,
  });
  return { clientId: client.id, clientSecret: secret! };
}
