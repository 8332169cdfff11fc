import Fastify from 'fastify';
import { exitWithParent } from './lifecycle.js';

/**
 * The reference every Gatehouse figure is divided by: the same framework and
 * version Gatehouse runs on, one route, no plugins, no logging.
 */
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url: address })}\n`);
exitWithParent();
