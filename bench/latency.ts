import { Agent } from 'node:http';
import autocannon from 'autocannon';
import { adminCall, chatToken, createBot, type GatehouseUnderTest } from './gatehouse.js';
import { cpuMeter, type Figures, type LoadOptions } from './load.js';
import { stopChild, type Child } from './procs.js';
import { latencyFigures, paced, post, sleep } from './paced.js';

/**
 * The two scenarios measured by their own clients rather than autocannon:
 * the Bot API's long-poll wake-up and webhook delivery. Both report
 * throughput as req/s and their latency as p50/p99, in the same table.
 */


/**
 * getUpdates wake-up: one bot long-polls (timeout 30 s, as bots do) while
 * `people` post to it through the chat client API at `rate` messages/s in
 * all. Latency runs from the moment a person's POST is sent to the moment the
 * getUpdates answer carrying that message is read: it includes the post's own
 * work (token check, transaction), the wake-up and the poll's answer.
 */
export async function wakeupLatency(gh: GatehouseUnderTest, load: LoadOptions, opts: { rate: number; people: number }): Promise<Figures> {
  if (!gh.botUrl) throw new Error('wakeup: the bot role is not running');
  const botToken = await createBot(gh, gh.user.username, `wake_${Date.now().toString(36)}_bot`);
  const botUsername = JSON.parse((await post(new Agent(), `${gh.botUrl}/bot${botToken}/getMe`, { 'content-type': 'application/json' }, '{}')).body).result.username as string;
  const people = await Promise.all(gh.loginUsers.slice(0, opts.people).map((a) => chatToken(gh, a)));
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const pollAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sentAt = new Map<number, number>();
  let latencies: number[] = [];
  let failed = 0;
  let seq = 0;
  let polling = true;
  let offset = 0;

  const poll = async () => {
    while (polling) {
      const r = await post(pollAgent, `${gh.botUrl}/bot${botToken}/getUpdates`, { 'content-type': 'application/json' }, JSON.stringify({ offset, timeout: 30, limit: 100 }));
      const now = performance.now();
      const updates = (JSON.parse(r.body) as { result?: { update_id: number; message?: { text?: string } }[] }).result ?? [];
      for (const u of updates) {
        offset = Math.max(offset, u.update_id + 1);
        const n = Number(/^m(\d+)$/.exec(u.message?.text ?? '')?.[1]);
        const t = sentAt.get(n);
        if (t !== undefined) {
          latencies.push(now - t);
          sentAt.delete(n);
        }
      }
    }
  };
  const poller = poll().catch((e: Error) => {
    failed++;
    console.error(`bench: wakeup: getUpdates failed: ${e.message}`);
  });

  const send = (n: number) => {
    const token = people[n % people.length]!;
    sentAt.set(n, performance.now());
    post(agent, `${gh.botUrl}/client/chats/${botUsername}/messages`, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, JSON.stringify({ text: `m${n}` }))
      .then((r) => {
        if (r.status !== 200) failed++;
      }, () => failed++);
  };
  const produce = (seconds: number) => paced(opts.rate, seconds, () => send(seq++));

  await produce(Math.max(1, load.warmup));
  await sleep(200);
  latencies = [];
  failed = 0;
  sentAt.clear();
  const cpu = cpuMeter(gh.child.proc.pid);
  const sent = await produce(load.duration);
  const cpuUs = cpu();
  // Let the last messages arrive; whatever has not after 2 s counts as an error.
  for (let i = 0; i < 20 && sentAt.size; i++) await sleep(100);
  const lost = sentAt.size;
  polling = false;
  // The poll in flight ends with the next message, or at its timeout; one more message ends it now.
  send(seq++);
  await Promise.race([poller, sleep(3000)]);
  agent.destroy();
  pollAgent.destroy();
  return latencyFigures(latencies, { duration: load.duration, sent, failed, lost, cpuUs });
}

interface ReceiverStats {
  count: number;
  duplicates: number;
  first: number;
  last: number;
  p50: number;
  p99: number;
}

/**
 * Webhook delivery: a Gatehouse with the `worker` role and an endpoint
 * subscribed to token.issued at the bench's receiver; client_credentials
 * requests produce the events (each token and its event commit together).
 * `rate` > 0 offers that many events per second and reports the deliveries
 * per second and the event→arrival delay at that rate; `rate` 0 produces as
 * fast as the server can for the measured seconds, then waits for the outbox
 * to drain, and reports deliveries per second from first to last arrival.
 */
export async function webhookDelivery(gh: GatehouseUnderTest, receiverUrl: string, load: LoadOptions, rate: number): Promise<Figures> {
  const stats = async () => (await (await fetch(`${receiverUrl}/stats`)).json()) as ReceiverStats;
  const reset = () => fetch(`${receiverUrl}/reset`, { method: 'POST' });
  const produce = (seconds: number) => autocannon({
    url: `${gh.url}/oauth/token`,
    method: 'POST',
    headers: { authorization: gh.ccJwt.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
    connections: rate ? 16 : load.connections,
    ...(rate ? { overallRate: rate } : {}),
    duration: seconds,
  });
  const drain = (expected: number) => drainReceiver(stats, expected, 30);

  if (load.warmup > 0) {
    const w = await produce(load.warmup);
    await drain(w['2xx']);
  }
  await reset();
  const cpu = cpuMeter(gh.child.proc.pid);
  const r = await produce(load.duration);
  let s: ReceiverStats;
  if (rate) {
    s = await stats();
  } else {
    await drain(r['2xx']);
    s = await stats();
  }
  const cpuUs = cpu();
  const seconds = rate ? load.duration : Math.max(0.001, (s.last - s.first) / 1000);
  return deliveryFigures(s, r, cpuUs, { seconds, cpuSeconds: rate ? load.duration : Math.max(load.duration, seconds), drained: !rate });
}

/** Waits until the receiver counted `expected` deliveries, or its count stood still for `idleTicks` × 100 ms. */
async function drainReceiver(stats: () => Promise<ReceiverStats>, expected: number, idleTicks: number): Promise<void> {
  let before = -1;
  for (let idle = 0; idle < idleTicks; ) {
    await sleep(100);
    const { count } = await stats();
    if (count >= expected) return;
    idle = count === before ? idle + 1 : 0;
    before = count;
  }
}

/**
 * A delivery row's figures: deliveries per second over `seconds`, the
 * server's CPU over `cpuSeconds`; `drained`: every event produced (a 2xx
 * token response) should have arrived, and one that did not is an error
 * (a duplicate is not: at-least-once).
 */
function deliveryFigures(s: ReceiverStats, produced: autocannon.Result, cpuUs: number | undefined, w: { seconds: number; cpuSeconds: number; drained: boolean }): Figures {
  return {
    rps: s.count / w.seconds,
    p50: s.p50,
    p99: s.p99,
    total: s.count,
    non2xx: produced.non2xx,
    errors: produced.errors + (w.drained ? Math.max(0, produced['2xx'] - s.count) : 0),
    cpuPerRequestUs: cpuUs === undefined || !s.count ? undefined : cpuUs / s.count,
    serverCpuShare: cpuUs === undefined ? undefined : cpuUs / (w.cpuSeconds * 1e6),
  };
}

/**
 * Webhook delivery flat out: `gh` (the auth role alone) records token.issued
 * for client_credentials requests made as fast as it answers them for the
 * measured seconds, with no worker running, so the events wait in the
 * outbox; then a worker process of its own (`startWorker`) starts on the same
 * database and delivers them. req/s: deliveries from the first arrival to the
 * last; CPU per delivery: the worker process's; p50/p99: commit to arrival,
 * the backlog's wait included. What it measures is the deliverer, not the
 * token endpoint that feeds it (a deployment runs them in processes of their
 * own; on this machine both would share the same two cores).
 */
export async function webhookDrain(gh: GatehouseUnderTest, receiverUrl: string, load: LoadOptions, startWorker: () => Promise<Child>): Promise<Figures> {
  const stats = async () => (await (await fetch(`${receiverUrl}/stats`)).json()) as ReceiverStats;
  const produced = await autocannon({
    url: `${gh.url}/oauth/token`,
    method: 'POST',
    headers: { authorization: gh.ccJwt.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
    connections: load.connections,
    duration: load.duration,
  });
  await fetch(`${receiverUrl}/reset`, { method: 'POST' });
  const worker = await startWorker();
  try {
    const cpu = cpuMeter(worker.proc.pid);
    await drainReceiver(stats, produced['2xx'], 50);
    const s = await stats();
    const cpuUs = cpu();
    const seconds = Math.max(0.001, (s.last - s.first) / 1000);
    return deliveryFigures(s, produced, cpuUs, { seconds, cpuSeconds: seconds, drained: true });
  } finally {
    await stopChild(worker);
  }
}

/** An endpoint for token.issued at the receiver, through the admin API. */
export async function subscribeReceiver(gh: GatehouseUnderTest, receiverUrl: string): Promise<void> {
  await adminCall(gh, 'POST', '/webhooks', { url: `${receiverUrl}/hook`, events: ['token.issued'], description: 'bench receiver' }, 201);
}
