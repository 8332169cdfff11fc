import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { RunningGatehouse } from '../server.js';
import type { SqlStorage } from '../store/index.js';
import { WORKER_SLOT_ENV } from '../infra/cluster-protocol.js';
import type { ServedUrls } from '../infra/ready-line.js';
import { CliFailure, clusterLogger, listenFailure, logFormatFor, packageVersion, serveLogger, startBanner } from './terminal.js';

type Format = 'json' | 'text';

/** SIGTERM and Ctrl+C: `stop` once, then exit 0 (1 when stopping failed). */
function onSignals(logger: Logger, stop: () => Promise<void>, also: NodeJS.Signals[] = []): (reason: string) => void {
  let stopping = false;
  const run = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal: reason }, 'shutting down');
    stop().then(() => process.exit(0), (err) => {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  for (const sig of ['SIGTERM', 'SIGINT', ...also] as const) process.on(sig, () => run(sig));
  return run;
}

function banner(config: Config, urls: ServedUrls, metricsUrl: string | undefined, hasUser: boolean): void {
  process.stdout.write(startBanner({
    version: packageVersion(), authUrl: urls.authUrl, apiUrl: urls.apiUrl, botUrl: urls.botUrl, metricsUrl, databaseUrl: config.databaseUrl, hasUser,
  }));
}

/** BotFather is a user the bot role makes for itself, not a person who can sign in. */
async function hasUser(gh: { console: RunningGatehouse['gh']['console'] }): Promise<boolean> {
  const { BOTFATHER } = await import('../core/bot/manage.js');
  return (await gh.console.listUsers({ limit: 2, offset: 0 })).some((u) => u.username !== BOTFATHER);
}

/**
 * What every worker would otherwise race to create on a fresh database, made
 * once by slot 1 of GATEHOUSE_WORKERS before the other slots open it: the
 * migrations (applied by the open), the signing key, BotFather.
 */
async function prepareDatabase(config: Config, storage: SqlStorage): Promise<boolean> {
  const [{ systemClock }, { KeyRing }, { ensureBotFather }] = await Promise.all([
    import('../core/ports.js'), import('../core/oauth/keys.js'), import('../core/bot/manage.js'),
  ]);
  await new KeyRing(storage.keys, systemClock).init();
  if (config.roles.has('bot')) await ensureBotFather(storage.bot, storage.users, systemClock);
  return hasUser(storage);
}

/** One process serving everything (GATEHOUSE_WORKERS=1, the default). */
async function serveAlone(config: Config, format: Format): Promise<void> {
  const logger = serveLogger(config, format);
  // Loaded here, not at the top: a primary of GATEHOUSE_WORKERS (and every other command) never needs the HTTP apps.
  const { startGatehouse } = await import('../server.js');
  let running: RunningGatehouse;
  try {
    running = await startGatehouse(config, logger ? { logger } : {});
  } catch (e) {
    throw listenFailure(config, e) ?? e;
  }
  if (format === 'text') {
    banner(config, { authUrl: running.authUrl, apiUrl: config.roles.has('api') ? running.apiUrl : undefined, botUrl: running.bot?.url }, running.metricsUrl, await hasUser(running.gh));
  }
  onSignals(running.logger, () => running.close());
}

/**
 * The primary of GATEHOUSE_WORKERS above 1: forks the workers and relays
 * between them (src/infra/cluster-primary.ts). It serves no request and
 * opens no database itself (slot 1 prepares it), so it loads little.
 */
async function servePrimary(config: Config, format: Format): Promise<void> {
  const logger = clusterLogger(config, format, 0);
  const { startPrimary, WorkerStartError } = await import('../infra/cluster-primary.js');
  const running = await startPrimary(config, logger).catch((e: unknown) => {
    // The worker printed why; the primary's own stack would only bury it.
    throw e instanceof WorkerStartError ? new CliFailure(e.message) : e;
  });
  if (format === 'text') {
    const metricsUrl = config.metricsPort === undefined ? undefined : `http://${config.host}:${config.metricsPort}`;
    banner(config, running.urls, metricsUrl, running.someone);
  }
  onSignals(logger, () => running.stop());
}

/** A worker forked by the primary: serves its share of the connections; slot 1 also runs the notification worker role. */
async function serveWorker(config: Config, format: Format): Promise<void> {
  const slot = Number(process.env[WORKER_SLOT_ENV] ?? '1');
  const logger = clusterLogger(config, format, slot);
  const roles = new Set([...config.roles].filter((r) => r !== 'worker' || slot === 1));
  const [{ ClusterLinks, processChannel }, { startGatehouse }, { openStorageWhenReachable }, { workerPoolMax }] = await Promise.all([
    import('../infra/cluster-child.js'), import('../server.js'), import('../store/startup.js'), import('../store/db.js'),
  ]);
  const links = new ClusterLinks(processChannel(), config.botFlood);
  let running: RunningGatehouse;
  try {
    // Slot 1 applies the migrations and makes the key; the others open the database once it has.
    if (slot !== 1) await links.prepared();
    const storage = await openStorageWhenReachable(config.databaseUrl, logger, { secretKey: config.secretKey, migrate: slot === 1, migrations: config.migrate, poolMax: workerPoolMax(config.workers) });
    if (slot === 1) links.announcePrepared(await prepareDatabase(config, storage));
    running = await startGatehouse(Object.freeze({ ...config, roles }), {
      logger, storage, worker: { slot, links, ready: (urls) => links.ready(urls) },
    });
  } catch (e) {
    // Nothing else would end this process: the channel to the primary holds it open.
    process.disconnect();
    throw listenFailure(config, e) ?? e;
  }
  const stop = onSignals(logger, async () => {
    await running.close();
    links.close();
  });
  // The primary is gone (killed): stop serving rather than run on unsupervised.
  process.on('disconnect', () => stop('primary gone'));
}

/** `gatehouse serve`: alone, or as the primary or a worker of GATEHOUSE_WORKERS processes. */
export async function serve(config: Config): Promise<void> {
  const format = logFormatFor(config, process.stdout.isTTY === true);
  if (cluster.isWorker) return serveWorker(config, format);
  if (config.workers > 1) return servePrimary(config, format);
  return serveAlone(config, format);
}
