/**
 * Single sign-on in one command:
 *
 *   npm run example:sso
 *
 * starts Gatehouse (in-memory SQLite unless GATEHOUSE_DATABASE_URL says
 * otherwise; set GATEHOUSE_REDIS_URL to keep sessions in Redis), a demo user,
 * and two websites that sign in with it through openid-client: Bookshop on
 * http://127.0.0.1:3001 and Travel desk on http://127.0.0.1:3002
 * (EXAMPLE_SSO_PORTS=4001,4002 to change them). Every GATEHOUSE_* setting
 * applies as usual.
 */
import { loadConfig } from '../../src/config.js';
import { startGatehouse } from '../../src/server.js';
import { DEMO_USER, ensureDemoUser } from '../website/clients.js';
import { registerSsoSite } from './clients.js';
import { startSsoSite, type SsoSite } from './site.js';

const config = loadConfig({
  GATEHOUSE_DATABASE_URL: 'sqlite::memory:',
  GATEHOUSE_LOG_LEVEL: 'warn',
  // The demo sites, and their back-channel logout endpoints, are on loopback.
  GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true',
  // Beside `npm start` (8080-8082) and `npm run example` (9080-9081).
  GATEHOUSE_AUTH_PORT: '9090',
  ...process.env,
  // The sites need only the authorization server.
  GATEHOUSE_ROLES: 'auth',
});
const gatehouse = await startGatehouse(config);
await ensureDemoUser(gatehouse.gh);

const [portA, portB] = (process.env.EXAMPLE_SSO_PORTS ?? '3001,3002').split(',').map(Number);
const sites: { title: string; site: SsoSite }[] = [];
for (const [title, accent, port] of [['Bookshop', '#7a3e9d', portA], ['Travel desk', '#0f766e', portB]] as const) {
  const site = await startSsoSite({
    title, accent, issuer: gatehouse.authUrl, port,
    register: (url) => registerSsoSite(gatehouse.gh, title, url),
    peers: () => sites.filter((s) => s.title !== title).map((s) => ({ title: s.title, url: s.site.url })),
  });
  sites.push({ title, site });
}

console.log(`
Single sign-on example
  Bookshop:              ${sites[0]!.site.url}
  Travel desk:           ${sites[1]!.site.url}
  Gatehouse:             ${gatehouse.authUrl}  (your account page: ${gatehouse.authUrl}/account)
Sign in on one site as ${DEMO_USER.username} / ${DEMO_USER.password}; the other then signs you in without a password.
"Sign out everywhere" on either ends both (back-channel logout). Ctrl-C stops everything.`);

const stop = async () => {
  await Promise.all(sites.map((s) => s.site.close()));
  await gatehouse.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
