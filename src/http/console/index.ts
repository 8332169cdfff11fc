import type { FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import type { Gatehouse } from '../../gatehouse.js';
import { clientPages } from './clients.js';
import { demoCallbackRoutes } from './demo-callback.js';
import { adminClientStrategy } from './guard.js';
import { homePage } from './home.js';
import { keyPages } from './keys.js';
import { consoleStylesheet } from './layout.js';
import { userPages } from './users.js';
import { userDetailPages } from './user-detail.js';
import { userManagePages } from './user-manage.js';
import { webhookPages } from './webhooks.js';
import { mailPages } from './mail.js';
import { accessPages } from './access.js';
import { invitePages } from './invite.js';

/**
 * Pages beside the sign-in pages: the walkthrough's landing page, and the
 * admin console at {auth_url}/admin, which shares its paths with the JSON
 * admin API (src/http/console/guard.ts says how a request picks one). Their
 * own context, so the cookie hooks run only here and on the sign-in pages.
 */
export async function consolePages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  app.addConstraintStrategy(adminClientStrategy);
  await app.register(async (pages) => {
    await pages.register(cookie);
    pages.get('/assets/console.css', async (_req, reply) =>
      reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(consoleStylesheet));
    await demoCallbackRoutes(pages, gh);
    await homePage(pages, gh);
    await clientPages(pages, gh);
    await userPages(pages, gh);
    await userManagePages(pages, gh);
    await userDetailPages(pages, gh);
    await keyPages(pages, gh);
    await webhookPages(pages, gh);
    await mailPages(pages, gh);
    await accessPages(pages, gh);
    await invitePages(pages, gh);
  });
}
