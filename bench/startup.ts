/**
 * Cold start to ready and idle resident memory (issue 16's last target: ≤ 6×
 * and ≤ 2.5× a bare Node http server, same run). In `npm run bench` it is the
 * scenario `startup` (rows `startup` on db `-` for the bare server, `sqlite`
 * and `sqlite/workers=auto` for Gatehouse); standalone,
 * `node --import tsx bench/startup.ts [--runs N]` also shows the start
 * through tsx.
 *
 * Gatehouse starts compiled (GATEHOUSE_COMPILED=1, what `npm start` runs),
 * roles auth,api,bot on SQLite, on a database already migrated (a restart,
 * not a first install). Ready: the process printed its ready line
 * ("Gatehouse ready", after migrations, keys and all three listeners; the
 * bare server once it listens). RSS: VmRSS two seconds after ready, summed
 * over the process and its children (the workers). CPU: user + system time
 * of the same processes at ready.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Figures } from './load.js';
import { onCleanup } from './procs.js';
import type { Row } from './report.js';
import type { Scenario } from './scenarios.js';

const BIN = fileURLToPath(new URL('../bin/gatehouse.mjs', import.meta.url));
const BARE = `require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log('ready ' + this.address().port); });`;
/** Starts per row; the row shows the median. */
const STARTS = 3;
const IDLE_MS = 2000;
const CLOCK_TICKS_PER_SECOND = 100;

export interface Start {
  ms: number;
  rssMb: number;
  cpuMs: number;
}

/** The figures of a `startup` row: `p50` is the median start in ms, `p99` the slowest; `readyMs`, `rssMb` and `cpuMs` the medians. */
export type StartupFigures = Figures & { readyMs: number; rssMb: number; cpuMs: number; starts: Start[] };

/** Sum over `pid` and its descendants of VmRSS (kB) and utime + stime (ms). */
function usage(pid: number): { kb: number; cpuMs: number } {
  let kb = 0;
  let cpuMs = 0;
  try {
    kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
      const c = usage(Number(child));
      kb += c.kb;
      cpuMs += c.cpuMs;
    }
  } catch {
    // Gone meanwhile.
  }
  return { kb, cpuMs };
}

class Rebuilt extends Error {}

async function once(args: string[], env: NodeJS.ProcessEnv, ready: (line: string) => boolean): Promise<Start> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  try {
    const { ms, cpuMs } = await new Promise<{ ms: number; cpuMs: number }>((resolve, reject) => {
      let out = '';
      child.stderr.on('data', (d) => {
        err += d;
        // src/ changed since the last build (someone is editing): this start built dist/ first, not a start to time.
        if (err.includes('building dist/')) reject(new Rebuilt());
      });
      child.stdout.on('data', (d) => {
        out += d;
        if (out.split('\n').some(ready)) resolve({ ms: performance.now() - t0, cpuMs: usage(child.pid!).cpuMs });
      });
      child.on('exit', (code) => reject(new Error(`exited ${code} before ready:\n${out.slice(-2000)}${err.slice(-2000)}`)));
    });
    await new Promise((r) => setTimeout(r, IDLE_MS));
    return { ms, rssMb: usage(child.pid!).kb / 1024, cpuMs };
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** `starts` timed starts (a start that had to rebuild dist/ is not counted and is tried again). */
async function measureStarts(starts: number, args: string[], env: NodeJS.ProcessEnv, ready: (line: string) => boolean): Promise<StartupFigures> {
  const got: Start[] = [];
  for (let tries = 0; got.length < starts; tries++) {
    try {
      got.push(await once(args, env, ready));
    } catch (e) {
      if (!(e instanceof Rebuilt) || tries > starts + 3) throw e;
    }
  }
  const readyMs = median(got.map((g) => g.ms));
  return {
    rps: 0, p50: readyMs, p99: Math.max(...got.map((g) => g.ms)), total: got.length, non2xx: 0, errors: 0, cpuPerRequestUs: undefined, serverCpuShare: undefined,
    readyMs, rssMb: median(got.map((g) => g.rssMb)), cpuMs: median(got.map((g) => g.cpuMs)), starts: got,
  };
}

const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_')));

/** A Gatehouse (its bin/gatehouse.mjs) started again and again on one migrated SQLite database. */
class GatehouseStarts {
  readonly dir = mkdtempSync(join(tmpdir(), 'gh-startup-'));
  private migrated = false;

  constructor(readonly bin: string) {}

  private args = () => [this.bin, 'serve', '--roles', 'auth,api,bot', '--host', '127.0.0.1', '--auth-port', '0', '--api-port', '0', '--bot-port', '0',
    '--database-url', `sqlite:${join(this.dir, 'g.db')}`, '--log-level', 'info'];

  private env = (compiled: boolean, workers?: string): NodeJS.ProcessEnv => ({
    ...cleanEnv(), GATEHOUSE_COMPILED: compiled ? '1' : '0', GATEHOUSE_LOG_FORMAT: 'json', ...(workers ? { GATEHOUSE_WORKERS: workers } : {}),
  });

  async measure(starts: number, opts: { compiled?: boolean; workers?: string } = {}): Promise<StartupFigures> {
    const compiled = opts.compiled ?? true;
    if (!this.migrated) {
      // Migrated once (and dist/ built when stale: minutes on a loaded machine) before anything is timed.
      await measureStarts(1, this.args(), this.env(true), gatehouseReady).catch(async (e: unknown) => {
        if (!(e instanceof Rebuilt)) throw e;
        await waitForBuild(this.args(), this.env(true));
      });
      this.migrated = true;
    }
    return measureStarts(starts, this.args(), this.env(compiled, opts.workers), gatehouseReady);
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The first start may build dist/: let that start run to ready, untimed. */
async function waitForBuild(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.split('\n').some(gatehouseReady)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`exited ${code} while building dist/ or starting`)));
  });
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

const gatehouseReady = (l: string) => l.includes('"Gatehouse ready');
const bareReady = (l: string) => l.startsWith('ready ');

const LABEL = 'cold start to ready and idle RSS: p50 ms = median of 3 starts (p99: slowest), RSS and CPU to ready in the figures (JSON: readyMs, rssMb, cpuMs); ' +
  'Gatehouse compiled (npm start), roles auth,api,bot, SQLite already migrated; db `-`: a bare node:http server';

/**
 * The `startup` rows of `npm run bench`: the bare server (db `-`), then each
 * Gatehouse checkout compiled with one process and with GATEHOUSE_WORKERS=auto.
 * `bins`: the checkouts, named as in `--gatehouse NAME=PATH` ('' for this one).
 */
export function startupScenarios(bins: { name: string; bin: string }[]): { db: string; scenarios: Scenario[] }[] {
  // A ceiling no row has: the ratio to the bare row is in startupNotes, not the req/s columns.
  const row = (run: () => Promise<StartupFigures>): Scenario => ({ id: 'startup', label: LABEL, pid: undefined, ceiling: 'startup-bare', run });
  const groups = [{ db: '-', scenarios: [row(() => measureStarts(STARTS, ['-e', BARE], cleanEnv(), bareReady))] }];
  for (const b of bins) {
    let starts: GatehouseStarts | undefined;
    const measure = (workers?: string) => {
      if (!starts) {
        const s = (starts = new GatehouseStarts(b.bin));
        onCleanup(async () => s.close());
      }
      return starts.measure(STARTS, workers ? { workers } : {});
    };
    groups.push({ db: ['sqlite', b.name].filter(Boolean).join('/'), scenarios: [row(() => measure())] });
    groups.push({ db: `sqlite/${[b.name, 'workers=auto'].filter(Boolean).join(',')}`, scenarios: [row(() => measure('auto'))] });
  }
  return groups;
}

/** The startup rows against the bare server of the same run, and the target (issue 16: ≤ 6× the start, ≤ 2.5× the RSS). */
export function startupNotes(rows: Row[]): string[] {
  const all = rows.filter((r) => r.id === 'startup');
  const bare = all.find((r) => r.db === '-')?.figures as StartupFigures | undefined;
  if (!bare) return [];
  return all.filter((r) => r.db !== '-').map((r) => {
    const f = r.figures as StartupFigures;
    const [t, m] = [f.readyMs / bare.readyMs, f.rssMb / bare.rssMb];
    return `startup (${r.db}): ${f.readyMs.toFixed(0)} ms to ready, ${f.rssMb.toFixed(0)} MB idle RSS, ${f.cpuMs.toFixed(0)} ms CPU; ` +
      `bare node:http ${bare.readyMs.toFixed(0)} ms, ${bare.rssMb.toFixed(0)} MB: ${t.toFixed(1)}× and ${m.toFixed(1)}× — target ≤ 6× and ≤ 2.5×: ${t <= 6 && m <= 2.5 ? 'met' : 'NOT met'}`;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: String(STARTS) }, bin: { type: 'string', default: BIN } } });
  const runs = Number(values.runs);
  const gh = new GatehouseStarts(values.bin);
  try {
    const bare = await measureStarts(runs, ['-e', BARE], cleanEnv(), bareReady);
    const variants: [string, () => Promise<StartupFigures>][] = [
      ['bare node:http', async () => bare],
      ['gatehouse, tsx', () => gh.measure(runs, { compiled: false })],
      ['gatehouse, compiled (npm start)', () => gh.measure(runs)],
      ['gatehouse, compiled, GATEHOUSE_WORKERS=auto', () => gh.measure(runs, { workers: 'auto' })],
    ];
    const rows: string[] = [];
    for (const [name, measure] of variants) {
      const m = await measure();
      rows.push(`| ${name} | ${m.readyMs.toFixed(0)} ms | ${(m.readyMs / bare.readyMs).toFixed(1)}× | ${m.rssMb.toFixed(0)} MB | ${(m.rssMb / bare.rssMb).toFixed(1)}× | ${m.cpuMs.toFixed(0)} ms |`);
    }
    console.log(`start to ready and idle RSS, median of ${runs} starts each\n\n| server | start to ready | vs bare | idle RSS | vs bare | CPU to ready |\n|---|---|---|---|---|---|\n${rows.join('\n')}`);
  } finally {
    gh.close();
  }
}
