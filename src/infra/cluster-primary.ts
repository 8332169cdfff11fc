import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config.js';
import { FloodControl } from '../core/bot/flood.js';
import { Outbox, unbatch, WORKER_SLOT_ENV, type ToPrimary, type ToWorker } from './cluster-protocol.js';
import type { MetricsListener } from './metrics.js';
import { logReady, type ServedUrls } from './ready-line.js';

/** A worker that lived this long before dying restarts at once; faster deaths back off. */
const HEALTHY_MS = 30_000;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 15_000;
/** SIGTERM lets a worker finish in-flight requests (long polls end at once); then it is killed. */
const STOP_GRACE_MS = 60_000;

interface Slot {
  readonly slot: number;
  worker: Worker | undefined;
  startedAt: number;
  /** Consecutive deaths within HEALTHY_MS of their start. */
  failures: number;
  restart: NodeJS.Timeout | undefined;
  urls: ServedUrls | undefined;
}

/**
 * What the workers share through the primary: long-poll wake-ups routed to
 * the workers subscribed to a topic, one flood control, one webhook delivery
 * lease per bot, and outbox wake-ups for the worker running the notification
 * role. Messages are handled in arrival order, which makes `sub` then `ack`
 * a barrier: a publish handled before a worker's subscription was committed
 * before that worker reads storage.
 */
export class ClusterHub {
  private readonly topics = new Map<string, Set<Worker>>();
  private readonly leases = new Map<number, { holder: Worker; until: number }>();
  private readonly flood: FloodControl;

  constructor(config: Pick<Config, 'botFlood'>, private readonly notifier: () => Worker | undefined, private readonly now = () => Date.now()) {
    this.flood = new FloodControl(config.botFlood, now);
  }

  handle(from: Worker, m: ToPrimary): void {
    switch (m.gh) {
      case 'pub':
        for (const w of this.topics.get(m.topic) ?? []) if (w !== from) send(w, m);
        return;
      case 'sub': {
        let set = this.topics.get(m.topic);
        if (!set) this.topics.set(m.topic, (set = new Set()));
        set.add(from);
        return send(from, { gh: 'ack', id: m.id });
      }
      case 'unsub':
        return this.unsubscribe(from, m.topic);
      case 'flood':
        return send(from, { gh: 'flood', id: m.id, wait: this.flood.take(m.botId, m.chat) });
      case 'flood-back':
        return this.flood.giveBack(m.botId, m.chat);
      case 'lease': {
        const held = this.leases.get(m.botId);
        const t = this.now();
        const ok = !held || held.holder === from || held.until <= t;
        if (ok) this.leases.set(m.botId, { holder: from, until: t + m.ms });
        return send(from, { gh: 'lease', id: m.id, ok });
      }
      case 'outbox': {
        const n = this.notifier();
        if (n && n !== from) send(n, { gh: 'outbox' });
        return;
      }
      case 'ready':
      case 'prepared':
      case 'await-prepared':
        return;
    }
  }

  private unsubscribe(w: Worker, topic: string): void {
    const set = this.topics.get(topic);
    if (!set) return;
    set.delete(w);
    if (set.size === 0) this.topics.delete(topic);
  }

  /** A worker exited: its subscriptions go, and its leases are free for the others at once. */
  forget(w: Worker): void {
    for (const topic of [...this.topics.keys()]) this.unsubscribe(w, topic);
    for (const [bot, l] of this.leases) if (l.holder === w) this.leases.delete(bot);
  }
}

/** Per worker, what one turn of the primary's event loop sends it goes as one IPC message. */
const outboxes = new WeakMap<Worker, Outbox<ToWorker>>();

function send(w: Worker, m: ToWorker): void {
  let outbox = outboxes.get(w);
  if (!outbox) {
    outbox = new Outbox((batch) => {
      if (w.isConnected()) w.send(batch);
    });
    outboxes.set(w, outbox);
  }
  outbox.send(m);
}

/** A worker ended before it served: it wrote its own reason (a setting, pending migrations, a busy port) on stderr. */
export class WorkerStartError extends Error {
  override name = 'WorkerStartError';
}

export interface RunningPrimary {
  /** The URLs the workers serve (the same for all: they share the listening sockets). */
  urls: ServedUrls;
  /** Whether a person's account exists (slot 1 looked while preparing the database), for the start banner. */
  someone: boolean;
  /** SIGTERM to every worker, waits until all have exited (killed after a grace period). */
  stop(): Promise<void>;
}

/**
 * `serve` with GATEHOUSE_WORKERS above 1: this process serves nothing
 * itself and opens no database (it loads little: it stays small). N workers
 * are forked (node:cluster: they share the three listening sockets and the
 * primary hands out connections in turn); slot 1 prepares the database
 * (the migrations, the signing key, BotFather: exactly one process makes
 * them) while the others load their code, and they open the database only
 * once it says so. A worker that dies is started again, at once when it had
 * run a while, else with a doubling backoff. Resolves once every worker
 * serves; rejects, stopping the others, when one dies first.
 */
export async function startPrimary(config: Config, logger: Logger): Promise<RunningPrimary> {
  // A memory database is one process's own: the workers would each have an empty one.
  if (config.databaseUrl === 'sqlite::memory:') {
    throw new ConfigError(`GATEHOUSE_WORKERS=${config.workers} needs a database every process shares: sqlite::memory: is private to one process (use sqlite:PATH or postgres://…)`);
  }
  const slots: Slot[] = Array.from({ length: config.workers }, (_, i) => ({ slot: i + 1, worker: undefined, startedAt: 0, failures: 0, restart: undefined, urls: undefined }));
  // The notification worker role runs in slot 1 only (one per deployment by default).
  const hub = new ClusterHub(config, () => slots[0]!.worker);
  let stopping = false;
  let allReady = false;
  let settle!: { resolve: () => void; reject: (e: Error) => void };
  const started = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  const exits = new Set<Promise<void>>();
  let prepared: { someone: boolean } | undefined;
  const awaitingPrepared = new Set<Worker>();

  const fork = (s: Slot) => {
    s.restart = undefined;
    s.urls = undefined;
    s.startedAt = Date.now();
    const w = cluster.fork({ [WORKER_SLOT_ENV]: String(s.slot) });
    s.worker = w;
    w.on('message', (m: unknown) => {
      for (const msg of unbatch<ToPrimary>(m)) received(msg);
    });
    const received = (msg: ToPrimary) => {
      if (msg.gh === 'prepared' && !prepared) {
        prepared = { someone: msg.someone };
        for (const other of awaitingPrepared) send(other, { gh: 'prepared' });
        awaitingPrepared.clear();
      } else if (msg.gh === 'await-prepared') {
        if (prepared) send(w, { gh: 'prepared' });
        else awaitingPrepared.add(w);
      } else if (msg.gh === 'ready') {
        s.urls = { authUrl: msg.authUrl, apiUrl: msg.apiUrl, botUrl: msg.botUrl };
        if (allReady) logger.info({ slot: s.slot, worker_pid: w.process.pid }, `worker ${s.slot} serving again`);
        else if (slots.every((x) => x.urls)) {
          allReady = true;
          settle.resolve();
        }
      }
      hub.handle(w, msg);
    };
    const exited = new Promise<void>((resolve) => w.once('exit', (code, signal) => {
      hub.forget(w);
      awaitingPrepared.delete(w);
      if (s.worker === w) s.worker = undefined;
      resolve();
      if (stopping) return;
      if (!allReady) {
        settle.reject(new WorkerStartError(`worker ${s.slot} exited (${signal ?? `status ${code}`}) before it served; its error is above`));
        return;
      }
      s.failures = Date.now() - s.startedAt >= HEALTHY_MS ? 0 : s.failures + 1;
      const delay = s.failures === 0 ? 0 : Math.min(FIRST_BACKOFF_MS * 2 ** (s.failures - 1), MAX_BACKOFF_MS);
      logger.warn({ slot: s.slot, worker_pid: w.process.pid, code, signal, restart_in_ms: delay }, `worker ${s.slot} exited; starting it again`);
      s.restart = setTimeout(() => fork(s), delay);
    }));
    exits.add(exited);
    void exited.then(() => exits.delete(exited));
  };

  const stop = async () => {
    stopping = true;
    for (const s of slots) clearTimeout(s.restart);
    const live = slots.map((s) => s.worker).filter((w): w is Worker => w !== undefined && !w.isDead());
    for (const w of live) w.process.kill('SIGTERM');
    const grace = setTimeout(() => {
      for (const w of live) if (!w.isDead()) w.process.kill('SIGKILL');
    }, STOP_GRACE_MS);
    await Promise.all([...exits]);
    clearTimeout(grace);
  };

  for (const s of slots) fork(s);
  try {
    await started;
  } catch (e) {
    await stop();
    throw e;
  }
  const urls = slots[0]!.urls!;
  let metrics: MetricsListener | undefined;
  if (config.metricsPort !== undefined) {
    try {
      // prom-client is loaded only when metrics are served.
      const { clusterMetricsSource, startMetricsListener } = await import('./metrics.js');
      metrics = await startMetricsListener(config.host, config.metricsPort, clusterMetricsSource());
    } catch (e) {
      await stop();
      throw e;
    }
    logger.info({ metrics_url: `${metrics.url}/metrics` }, `Prometheus metrics at ${metrics.url}/metrics (all workers)`);
  }
  logReady(logger, config, urls, { workers: config.workers, pids: slots.map((s) => s.worker?.process.pid) });
  return {
    urls,
    someone: prepared?.someone ?? true,
    async stop() {
      await stop();
      await metrics?.close();
    },
  };
}
