/**
 * `npm run bench [-- options]`: Gatehouse next to its ceilings (a bare Node
 * http server, a bare Fastify route) and its peer (node-oidc-provider),
 * measured in one run on loopback with autocannon. Every server runs in a
 * child process of its own; all of them are stopped (and temp databases
 * removed) at the end, on error and on Ctrl-C. `--seed N` measures instead
 * how the token and introspection figures move with N stored rows
 * (bench/seed.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeChart } from './chart.js';
import { adminCall, GATEHOUSE_BIN, postgresReachable, startGatehouse, startWorker, type DbKind } from './gatehouse.js';
import { subscribeReceiver } from './latency.js';
import { measure, type LoadOptions } from './load.js';
import { startPeer } from './peer.js';
import { jsonField, startChild, stopAll } from './procs.js';
import { applyReference, loadAverage, meanRows, REFERENCE_AGAIN, targetNotes, textTable, writeMarkdown, type Row, type Run } from './report.js';
import { approvalNotes } from './approval.js';
import { accountScenarios, ACCOUNTS_ENV } from './accounts.js';
import { approvalScenarios, ceilingScenarios, gatehouseScenarios, peerScenarios, SCENARIO_IDS, subscribedScenarios, webhookScenarios, type Scenario } from './scenarios.js';
import { seedRun } from './seed.js';
import { startupNotes, startupScenarios } from './startup.js';

const USAGE = `usage: npm run bench -- [options]

  --duration S      seconds measured per scenario (default 5)
  --warmup S        seconds of warm-up per scenario, thrown away (default 1)
  --connections N   concurrent connections, pipelining 1 (default 50)
  --db KIND         sqlite | postgres | both (default both; postgres is skipped when unreachable)
  --only IDS        comma-separated subset of ${SCENARIO_IDS.join(',')}
                    (fastify and http always run: they are the references; a Gatehouse row brings its peer row)
  --runs N          repeat the whole measurement N times (default 1)
  --workers LIST    GATEHOUSE_WORKERS values to measure Gatehouse with, comma-separated (default 1;
                    e.g. 1,auto: each value is a Gatehouse column of its own, named workers=auto)
  --gatehouse NAME=PATH
                    also measure another checkout's bin/gatehouse.mjs (repeatable; for before/after
                    comparisons in one run, e.g. --gatehouse before=/tmp/old/bin/gatehouse.mjs)
  --profile DIR     run every server under node --cpu-prof, profiles written to DIR
                    (read one with: node --import tsx bench/profile-summary.ts FILE)
  --seed N[,M…]     cost vs data instead: token and introspection scenarios with 0, then N (then M)
                    stored tokens and grants, and a purge of expired rows under load (bench/seed.ts);
                    with --gatehouse, each checkout in turn; with --only, those scenarios and no purge
  --out FILE        markdown report (default docs/benchmarks.md)
  --chart FILE      SVG chart (default docs/benchmarks.svg, beside --out)
  --no-write        print the table only`;

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function options() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '50' },
      db: { type: 'string', default: 'both' },
      only: { type: 'string' },
      runs: { type: 'string', default: '1' },
      workers: { type: 'string', default: '1' },
      gatehouse: { type: 'string', multiple: true },
      profile: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string', default: resolve(ROOT, 'docs/benchmarks.md') },
      chart: { type: 'string', default: resolve(ROOT, 'docs/benchmarks.svg') },
      'no-write': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const num = (name: string, v: string, min: number, max: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer from ${min} to ${max}`);
    return n;
  };
  if (!['sqlite', 'postgres', 'both'].includes(values.db)) throw new Error('--db must be sqlite, postgres or both');
  const only = values.only ? new Set(values.only.split(',').map((s) => s.trim()).filter(Boolean)) : undefined;
  for (const id of only ?? []) if (!(SCENARIO_IDS as readonly string[]).includes(id)) throw new Error(`--only: unknown scenario ${id}`);
  const bins = [{ name: '', bin: GATEHOUSE_BIN }];
  for (const v of values.gatehouse ?? []) {
    const m = /^([a-z0-9_-]+)=(.+)$/i.exec(v);
    if (!m) throw new Error('--gatehouse takes NAME=PATH');
    bins.push({ name: m[1]!, bin: resolve(m[2]!) });
  }
  const workerCounts = values.workers.split(',').map((w) => w.trim());
  for (const w of workerCounts) if (w !== 'auto' && !/^[1-9]\d{0,2}$/.test(w)) throw new Error('--workers takes numbers or auto, comma-separated');
  const variants = bins.flatMap((b) => workerCounts.map((w) => ({
    name: [b.name, w === '1' ? '' : `workers=${w}`].filter(Boolean).join(','), bin: b.bin, workers: w === '1' ? undefined : w,
  })));
  const seed = values.seed?.split(',').map((v) => num('seed', v.replace(/_/g, ''), 1000, 100_000_000));
  return {
    bins,
    variants,
    load: {
      duration: num('duration', values.duration, 1, 60),
      warmup: num('warmup', values.warmup, 0, 30),
      connections: num('connections', values.connections, 1, 512),
    } satisfies LoadOptions,
    db: values.db as DbKind | 'both',
    only,
    runs: num('runs', values.runs, 1, 5),
    profile: values.profile ? resolve(values.profile) : undefined,
    seed,
    out: values['no-write'] ? undefined : resolve(values.out),
    chart: values['no-write'] ? undefined : resolve(values.chart),
  };
}

const urlLine = (line: string) => jsonField(line, 'url');
const serverScript = (name: string) => fileURLToPath(new URL(`./servers/${name}.ts`, import.meta.url));

async function main(): Promise<void> {
  const opts = options();
  let dbs: DbKind[] = opts.db === 'both' ? ['sqlite', 'postgres'] : [opts.db];
  if (dbs.includes('postgres') && !(await postgresReachable())) {
    if (opts.db === 'postgres') throw new Error('PostgreSQL is not reachable (set GATEHOUSE_BENCH_PG_URL)');
    console.warn('bench: PostgreSQL not reachable, measuring SQLite only');
    dbs = dbs.filter((d) => d !== 'postgres');
  }
  if (opts.profile) mkdirSync(opts.profile, { recursive: true });
  const profileFlags = opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${opts.profile}`] : [];
  const bare = (s: string) => startChild(s, [...profileFlags, '--import', 'tsx', serverScript(s)], urlLine).then((r) => ({ url: r.value, pid: r.child.proc.pid }));

  if (opts.seed) {
    await seedRun({ dbs, sizes: opts.seed, load: opts.load, out: opts.out, command: commandLine(), profileFlags, fastify: await bare('bare-fastify'), bins: opts.bins, only: opts.only });
    return;
  }

  // bare node:http too: the speed issue's targets are ratios to it (bench/targets.ts).
  // `reset` brings `reset-unknown`, the same request for a name no account has.
  const wanted = (id: string) => id === 'fastify' || id === 'http' || !opts.only || opts.only.has(id) || (id === 'reset-unknown' && opts.only.has('reset'));
  // A Gatehouse row asked for brings the peer row it is compared with.
  const peerWanted = (id: string) => !opts.only || opts.only.has(id) ||
    [...opts.only].some((o) => ({ cc: 'peer-cc', 'cc-subscribed': 'peer-cc', 'cc-opaque': 'peer-cc-opaque', introspect: 'peer-introspect', 'introspect-opaque': 'peer-introspect', refresh: 'peer-refresh' } as Record<string, string>)[o] === id);
  const [http, fastify, fastifyForm] = await Promise.all(['bare-http', 'bare-fastify', 'fastify-form'].map(bare));
  const groups: { db: string; scenarios: Scenario[] }[] = [{ db: '-', scenarios: ceilingScenarios({ http: http!, fastify: fastify!, fastifyForm: fastifyForm! }) }];
  const peerIds = ['peer-cc', 'peer-cc-opaque', 'peer-introspect', 'peer-refresh'];
  if (peerIds.some(peerWanted)) {
    const peer = await startPeer(profileFlags);
    groups.push({ db: 'memory', scenarios: peerScenarios(peer, opts.load).filter((s) => peerWanted(s.id)) });
  }
  // Cold starts first, while the servers above sit idle: SQLite, one process and workers=auto, per checkout.
  if (wanted('startup')) groups.push(...startupScenarios(opts.bins));
  const needWebhooks = wanted('webhooks') || wanted('webhooks-max');
  const receiver = needWebhooks ? (await startChild('webhook receiver', ['--import', 'tsx', serverScript('webhook-receiver')], urlLine)).value : undefined;
  for (const db of dbs) {
    for (const v of opts.variants) {
      const name = v.name ? `${db}/${v.name}` : db;
      const gh = await startGatehouse(db, { nodeFlags: profileFlags, bin: v.bin, ...(v.workers ? { workers: v.workers } : {}) });
      if (wanted('cc-subscribed')) {
        // Its own process: the subscription makes every token record token.issued, which would change the other rows.
        // With the column's worker count: its ratio is to that column's `cc`, measured right after it (the
        // column's first row), so the two sides of the ratio see the machine in the same state.
        const sub = await startGatehouse(db, { nodeFlags: profileFlags, bin: v.bin, roles: 'auth', minimal: true, ...(v.workers ? { workers: v.workers } : {}) });
        await adminCall(sub, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/unused', events: ['token.issued'], description: 'bench: recording cost' }, 201);
        groups.push({ db: name, scenarios: subscribedScenarios(sub) });
      }
      groups.push({ db: name, scenarios: gatehouseScenarios(gh, opts.load).filter((s) => wanted(s.id)) });
      if (needWebhooks) {
        // Its own process with the worker role: recording token.issued slows the token endpoint, and the worker's load would skew the other rows.
        const wh = await startGatehouse(db, { nodeFlags: profileFlags, bin: v.bin, roles: 'auth,worker', minimal: true });
        await subscribeReceiver(wh, receiver!);
        // webhooks-max: a feeding process with no worker, and the worker alone started once the outbox is full.
        let feed: Parameters<typeof webhookScenarios>[2];
        if (wanted('webhooks-max')) {
          const fg = await startGatehouse(db, { nodeFlags: profileFlags, bin: v.bin, roles: 'auth', minimal: true });
          await subscribeReceiver(fg, receiver!);
          feed = { gh: fg, startWorker: () => startWorker(fg, profileFlags) };
        }
        groups.push({ db: name, scenarios: webhookScenarios(wh, receiver!, feed).filter((s) => wanted(s.id)) });
      }
      if (wanted('approval')) {
        // Its own process: the notification bot's token is set at start, and the worker delivers the approval messages.
        const ap = await startGatehouse(db, { nodeFlags: profileFlags, bin: v.bin, roles: 'auth,bot,worker', minimal: true, notifyBot: true });
        groups.push({ db: name, scenarios: approvalScenarios(ap) });
      }
      if (['signup', 'reset', 'reset-unknown'].some(wanted)) {
        // Its own process: sign-up open, X-Forwarded-For trusted from loopback and e-mail queued (bench/accounts.ts).
        const ac = await startGatehouse(db, { nodeFlags: profileFlags, bin: v.bin, roles: 'auth', minimal: true, env: ACCOUNTS_ENV });
        groups.push({ db: name, scenarios: accountScenarios(ac, opts.load).filter((s) => wanted(s.id)) });
      }
    }
  }
  if (opts.profile) {
    const pids = groups.flatMap((g) => [...new Set(g.scenarios.map((s) => s.pid))].map((pid) => `${g.db} ${pid}`));
    process.stderr.write(`bench: profiling into ${opts.profile}: ${pids.join(', ')}\n`);
  }

  const runs: Run[] = [];
  const labels = new Map<string, string>();
  const reference = groups[0]!.scenarios.find((sc) => sc.id === 'fastify')!;
  const measureOne = async (s: Scenario, id: string, db: string, run: number): Promise<Row> => {
    process.stderr.write(`bench: ${opts.runs > 1 ? `run ${run + 1}/${opts.runs}, ` : ''}${id}${db === '-' ? '' : ` (${db})`}…\n`);
    const figures = s.run ? await s.run(opts.load) : await measure(await s.prepare!(), opts.load, s.pid);
    return { id, label: s.label, db, figures, ceiling: s.ceiling ?? 'fastify', peer: s.peer, ratio: undefined, cpuRatio: undefined, peerRatio: undefined, peerCpuRatio: undefined };
  };
  for (let i = 0; i < opts.runs; i++) {
    const rows: Row[] = [];
    const loadAtStart = loadAverage();
    for (const { db, scenarios } of groups) {
      for (const s of scenarios.filter((sc) => wanted(sc.id) || sc.id.startsWith('peer-'))) {
        labels.set(s.id, s.label);
        try {
          rows.push(await measureOne(s, s.id, db, i));
        } catch (e) {
          console.error(`bench: ${s.id} (${db}) failed: ${(e as Error).message}`);
        }
      }
    }
    // The reference again at the end, so one disturbed window on this shared machine does not skew every ratio.
    labels.set(REFERENCE_AGAIN, 'the bare Fastify route again, last: ratios divide by the mean of both Fastify rows');
    rows.push(await measureOne(reference, REFERENCE_AGAIN, '-', i));
    besideCc(rows);
    applyReference(rows);
    runs.push({ rows, load: [loadAtStart, loadAverage()] });
    console.log(`${opts.runs > 1 ? `\nRun ${i + 1} of ${opts.runs}\n` : '\n'}${textTable(rows)}\n${allNotes(rows).map((n) => `  ${n}`).join('\n')}`);
  }

  // The raw figures, to redraw the chart or check a number later.
  const saved = join(tmpdir(), 'gatehouse-bench-last.json');
  writeFileSync(saved, JSON.stringify({ command: commandLine(), runs }, null, 1));
  console.log(`figures saved in ${saved}`);
  if (opts.out) {
    const { load } = opts;
    let chart: string | undefined;
    if (opts.chart) {
      writeChart(opts.chart, meanRows(runs), `Gatehouse vs node-oidc-provider vs the ceiling, ${new Date().toISOString().slice(0, 10)}${runs.length > 1 ? ` (mean of ${runs.length} runs)` : ''}`);
      chart = `./${opts.chart.split('/').pop()}`;
    }
    writeMarkdown(opts.out, runs, {
      command: commandLine(),
      scenarioLabels: labels,
      notes: allNotes,
      settings: `autocannon, ${load.connections} connections (login: 16), pipelining 1, ${load.warmup} s warm-up then ${load.duration} s measured per scenario; ` +
        'each server in its own child process on 127.0.0.1',
      ...(chart ? { chart } : {}),
    });
    console.log(`\nwrote ${opts.out}${opts.chart ? ` and ${opts.chart}` : ''}`);
  }
}

/** Shown, as measured, just after its column's `cc` (measured before it: see the groups above). */
function besideCc(rows: Row[]): void {
  for (const sub of rows.filter((r) => r.id === 'cc-subscribed')) {
    if (!rows.some((r) => r.id === 'cc' && r.db === sub.db)) continue;
    rows.splice(rows.indexOf(sub), 1);
    rows.splice(rows.findIndex((r) => r.id === 'cc' && r.db === sub.db) + 1, 0, sub);
  }
}

/** Every note line of a run: the targets (bench/targets.ts), the approval and start-up rows. */
const allNotes = (rows: Row[]) => [...targetNotes(rows), ...approvalNotes(rows), ...startupNotes(rows)];

const commandLine = () => `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`bench: ${signal}, stopping servers…`);
    void stopAll().finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (e) {
  console.error(`bench: ${(e as Error).stack ?? (e as Error).message}`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
