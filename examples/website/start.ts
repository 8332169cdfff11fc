/**
 * The sample website in one command:
 *
 *   node --import tsx examples/website/start.ts
 *
 * starts Gatehouse (authorization server and resource server, in-memory
 * SQLite unless GATEHOUSE_DATABASE_URL says otherwise), registers the site's
 * two clients and a demo user, and serves the site on http://127.0.0.1:3000
 * (EXAMPLE_PORT to change it). Its Gatehouse listens on 9080 and 9081, so it
 * runs beside `npm start`. Every GATEHOUSE_* setting applies as usual.
 */
import { loadConfig } from '../../src/config.js';
import { startGatehouse } from '../../src/server.js';
import { DEMO_USER, ensureDemoUser, registerSampleClients, useSiteUrl } from './clients.js';
import { startWebsite } from './site.js';

const config = loadConfig({
  GATEHOUSE_DATABASE_URL: 'sqlite::memory:',
  GATEHOUSE_LOG_LEVEL: 'warn',
  // Beside `npm start` (8080-8082), not on top of it.
  GATEHOUSE_AUTH_PORT: '9080',
  GATEHOUSE_API_PORT: '9081',
  ...process.env,
  // The site needs these two roles; the others are not part of the example.
  GATEHOUSE_ROLES: 'auth,api',
});
const gatehouse = await startGatehouse(config);
await ensureDemoUser(gatehouse.gh);
const clients = await registerSampleClients(gatehouse.gh);
const site = await startWebsite({
  issuer: gatehouse.authUrl,
  apiUrl: gatehouse.apiUrl,
  ...clients,
  port: Number(process.env.EXAMPLE_PORT ?? 3000),
});
await useSiteUrl(gatehouse.gh, clients.clientId, site.url);

console.log(`
Sample site:           ${site.url}
  implicit flow page:  ${site.url}/implicit
Authorization server:  ${gatehouse.authUrl}
Resource server:       ${gatehouse.apiUrl}/user
Sign in as ${DEMO_USER.username} / ${DEMO_USER.password}. Ctrl-C stops everything.`);

const stop = async () => {
  await site.close();
  await gatehouse.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
