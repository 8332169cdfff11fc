/**
 * `npm run bench [-- options]`: Gatehouse's throughput next to a bare Node
 * http server and a bare Fastify route, measured in one run on loopback with
 * autocannon. Every server runs in a child process of its own; all of them
 * are stopped (and temp databases removed) at the end, on error and on Ctrl-C.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GATEHOUSE_BIN, postgresReachable, startGatehouse, type DbKind } from './gatehouse.js';
import { measure, type LoadOptions } from './load.js';
import { jsonField, startChild, stopAll } from './procs.js';
import { applyReference, REFERENCE_AGAIN, targetNotes, textTable, writeMarkdown, type Row, type Run } from './report.js';
import { ceilingScenarios, gatehouseScenarios, SCENARIO_IDS, type Scenario } from './scenarios.js';

const USAGE = `usage: npm run bench -- [options]

  --duration S      seconds measured per scenario (default 5)
  --warmup S        seconds of warm-up per scenario, thrown away (default 1)
  --connections N   concurrent connections, pipelining 1 (default 50)
  --db KIND         sqlite | postgres | both (default both; postgres is skipped when unreachable)
  --only IDS        comma-separated subset of ${SCENARIO_IDS.join(',')} (fastify always runs: it is the reference)
  --runs N          repeat the whole measurement N times (default 1)
  --gatehouse NAME=PATH
                    also measure another checkout's bin/gatehouse.mjs (repeatable; for before/after
                    comparisons in one run, e.g. --gatehouse before=/tmp/old/bin/gatehouse.mjs)
  --profile DIR     run every server under node --cpu-prof, profiles written to DIR
                    (read one with: node --import tsx bench/profile-summary.ts FILE)
  --out FILE        markdown report (default docs/benchmarks.md)
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
      gatehouse: { type: 'string', multiple: true },
      profile: { type: 'string' },
      out: { type: 'string', default: resolve(ROOT, 'docs/benchmarks.md') },
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
  const variants = [{ name: '', bin: GATEHOUSE_BIN }];
  for (const v of values.gatehouse ?? []) {
    const m = /^([a-z0-9_-]+)=(.+)$/i.exec(v);
    if (!m) throw new Error('--gatehouse takes NAME=PATH');
    variants.push({ name: m[1]!, bin: resolve(m[2]!) });
  }
  return {
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
    out: values['no-write'] ? undefined : resolve(values.out),
  };
}

const urlLine = (line: string) => jsonField(line, 'url');
const serverScript = (name: string) => fileURLToPath(new URL(`./servers/${name}.ts`, import.meta.url));

async function main(): Promise<void> {
  const opts = options();
  const wanted = (id: string) => id === 'fastify' || !opts.only || opts.only.has(id);

  let dbs: DbKind[] = opts.db === 'both' ? ['sqlite', 'postgres'] : [opts.db];
  if (dbs.includes('postgres') && !(await postgresReachable())) {
    if (opts.db === 'postgres') throw new Error('PostgreSQL is not reachable (set GATEHOUSE_BENCH_PG_URL)');
    console.warn('bench: PostgreSQL not reachable, measuring SQLite only');
    dbs = dbs.filter((d) => d !== 'postgres');
  }
  if (opts.profile) mkdirSync(opts.profile, { recursive: true });

  const profileFlags = opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${opts.profile}`] : [];
  const [http, fastify, fastifyForm] = await Promise.all(['bare-http', 'bare-fastify', 'fastify-form'].map((s) =>
    startChild(s, [...profileFlags, '--import', 'tsx', serverScript(s)], urlLine).then((r) => ({ url: r.value, pid: r.child.proc.pid }))));
  const groups: { db: string; scenarios: Scenario[] }[] = [{ db: '-', scenarios: ceilingScenarios({ http: http!, fastify: fastify!, fastifyForm: fastifyForm! }) }];
  for (const db of dbs) {
    for (const v of opts.variants) {
      const gh = await startGatehouse(db, { nodeFlags: profileFlags, bin: v.bin });
      groups.push({ db: v.name ? `${db}/${v.name}` : db, scenarios: gatehouseScenarios(gh, opts.load.connections) });
    }
  }
  if (opts.profile) {
    // Profile files are named CPU.<date>.<time>.<pid>.…; the main thread's has thread index 0.
    const pids = [`bare-http ${http!.pid}`, `bare-fastify ${fastify!.pid}`, `fastify-form ${fastifyForm!.pid}`, ...groups.slice(1).map((g) => `gatehouse (${g.db}) ${g.scenarios[0]!.pid}`)];
    process.stderr.write(`bench: profiling into ${opts.profile}: ${pids.join(', ')}\n`);
  }

  const runs: Run[] = [];
  const labels = new Map<string, string>();
  const reference = groups[0]!.scenarios.find((sc) => sc.id === 'fastify')!;
  const measureOne = async (s: Scenario, id: string, db: string, run: number): Promise<Row> => {
    process.stderr.write(`bench: ${opts.runs > 1 ? `run ${run + 1}/${opts.runs}, ` : ''}${id}${db === '-' ? '' : ` (${db})`}…\n`);
    const figures = await measure(await s.prepare(), opts.load, s.pid);
    return { id, label: s.label, db, figures, ratio: undefined, cpuRatio: undefined };
  };
  for (let i = 0; i < opts.runs; i++) {
    const rows: Row[] = [];
    for (const { db, scenarios } of groups) {
      for (const s of scenarios.filter((sc) => wanted(sc.id))) {
        labels.set(s.id, s.label);
        rows.push(await measureOne(s, s.id, db, i));
      }
    }
    // The reference again at the end, so one disturbed window on this shared machine does not skew every ratio.
    labels.set(REFERENCE_AGAIN, 'the bare Fastify route again, last: ratios divide by the mean of both Fastify rows');
    rows.push(await measureOne(reference, REFERENCE_AGAIN, '-', i));
    applyReference(rows);
    runs.push({ rows });
    console.log(`${opts.runs > 1 ? `\nRun ${i + 1} of ${opts.runs}\n` : '\n'}${textTable(rows)}\n${targetNotes(rows).map((n) => `  ${n}`).join('\n')}`);
  }

  if (opts.out) {
    const { load } = opts;
    writeMarkdown(opts.out, runs, {
      command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
      scenarioLabels: labels,
      settings: `autocannon, ${load.connections} connections, pipelining 1, ${load.warmup} s warm-up then ${load.duration} s measured per scenario; ` +
        'each server in its own child process on 127.0.0.1',
    });
    console.log(`\nwrote ${opts.out}`);
  }
}

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
  console.error(`bench: ${(e as Error).message}`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
