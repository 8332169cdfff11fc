import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, platform, release, totalmem } from 'node:os';
import type { Figures } from './load.js';
import { checkTargets, columnOf, describe } from './targets.js';

export interface Row {
  id: string;
  label: string;
  db: string;
  figures: Figures;
  /** The row divided by (default `fastify`: the mean of both bare Fastify measurements). */
  ceiling: string;
  peer: string | undefined;
  /** req/s divided by the ceiling's, same run. */
  ratio: number | undefined;
  /**
   * The ceiling's CPU per request divided by this row's: the req/s ratio the
   * two would have if each had a core to itself, steadier than req/s on a
   * shared machine.
   */
  cpuRatio: number | undefined;
  /** req/s divided by the peer's (node-oidc-provider doing the same work). */
  peerRatio: number | undefined;
  peerCpuRatio: number | undefined;
}

/** The id of the second measurement of the reference, at the end of each run. */
export const REFERENCE_AGAIN = 'fastify-end';

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Fills in the ratios: to the ceiling (the bare Fastify mean, or the row's own) and to the peer. */
export function applyReference(rows: Row[]): void {
  const refs = rows.filter((r) => r.id === 'fastify' || r.id === REFERENCE_AGAIN).map((r) => r.figures);
  const cpus = refs.map((f) => f.cpuPerRequestUs).filter((c): c is number => c !== undefined);
  const fastify = { rps: mean(refs.map((f) => f.rps)), cpu: cpus.length === refs.length ? mean(cpus) : undefined };
  const find = (id: string, db: string) => rows.find((r) => r.id === id && r.db === db) ?? rows.find((r) => r.id === id);
  for (const r of rows) {
    const c = r.ceiling === 'fastify' ? fastify : (() => {
      const row = find(r.ceiling, r.db);
      return row ? { rps: row.figures.rps, cpu: row.figures.cpuPerRequestUs } : undefined;
    })();
    // Logins are bounded by argon2, not HTTP: a ratio to a bare route says nothing about them.
    if (c && r.id !== 'login' && !r.id.startsWith('wakeup') && !r.id.startsWith('callback') && !r.id.startsWith('webhooks')) {
      r.ratio = r.figures.rps / c.rps;
      r.cpuRatio = c.cpu === undefined || r.figures.cpuPerRequestUs === undefined ? undefined : c.cpu / r.figures.cpuPerRequestUs;
    }
    const p = r.peer ? rows.find((x) => x.id === r.peer) : undefined;
    if (p) {
      r.peerRatio = r.figures.rps / p.figures.rps;
      r.peerCpuRatio = p.figures.cpuPerRequestUs === undefined || r.figures.cpuPerRequestUs === undefined ? undefined : p.figures.cpuPerRequestUs / r.figures.cpuPerRequestUs;
    }
  }
}

/** Per scenario and database, the mean of the runs' figures, ratios recomputed: what the chart shows. */
export function meanRows(runs: Run[]): Row[] {
  const first = runs[0]?.rows ?? [];
  const avg = (xs: (number | undefined)[]) => (xs.some((x) => x === undefined) ? undefined : mean(xs as number[]));
  const rows = first.map((r) => {
    const same = runs.map((run) => run.rows.find((x) => x.id === r.id && x.db === r.db)).filter((x): x is Row => x !== undefined);
    const f = same.map((x) => x.figures);
    const figures: Figures = {
      rps: mean(f.map((x) => x.rps)), p50: mean(f.map((x) => x.p50)), p99: mean(f.map((x) => x.p99)),
      total: mean(f.map((x) => x.total)), non2xx: mean(f.map((x) => x.non2xx)), errors: mean(f.map((x) => x.errors)),
      cpuPerRequestUs: avg(f.map((x) => x.cpuPerRequestUs)), serverCpuShare: avg(f.map((x) => x.serverCpuShare)),
    };
    return { ...r, figures, ratio: undefined, cpuRatio: undefined, peerRatio: undefined, peerCpuRatio: undefined };
  });
  applyReference(rows);
  return rows;
}

export interface Run {
  rows: Row[];
  /** /proc/loadavg's 1-minute figure when the run started and ended. */
  load: [number, number];
}

const require = createRequire(import.meta.url);
export const versionOf = (pkg: string) => (require(`${pkg}/package.json`) as { version: string }).version;

export function machine(): string {
  const cs = cpus();
  const model = cs[0]?.model.trim() ?? 'unknown CPU';
  const gib = (totalmem() / 2 ** 30).toFixed(1);
  return `${cs.length} × ${model}, ${gib} GiB RAM, ${platform()} ${release()}, Node ${process.version}, ` +
    `fastify ${versionOf('fastify')}, oidc-provider ${versionOf('oidc-provider')}, autocannon ${versionOf('autocannon')}`;
}

export function loadAverage(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
}

const HEAD = ['scenario', 'db', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'vs ceiling', 'vs peer', 'CPU µs/req', 'server CPU', 'CPU vs ceiling', 'CPU vs peer'];

export const percent = (x: number | undefined) => (x === undefined ? '-' : `${(x * 100).toFixed(0)}%`);
const times = (x: number | undefined) => (x === undefined ? '-' : `${x.toFixed(1)}×`);
const ms = (x: number) => (x < 10 && !Number.isInteger(x) ? x.toFixed(2) : x.toFixed(1));

function cells(r: Row): string[] {
  const f = r.figures;
  const ceiling = (x: number | undefined) => (x === undefined ? '-' : `${percent(x)}${r.ceiling === 'fastify' ? '' : ` of ${r.ceiling}`}`);
  return [r.id, r.db, f.rps.toFixed(0), ms(f.p50), ms(f.p99), String(f.non2xx), String(f.errors), ceiling(r.ratio), times(r.peerRatio),
    f.cpuPerRequestUs === undefined ? '-' : f.cpuPerRequestUs.toFixed(0), percent(f.serverCpuShare), ceiling(r.cpuRatio), times(r.peerCpuRatio)];
}

export function textTable(rows: Row[]): string {
  const body = rows.map(cells);
  const widths = HEAD.map((h, i) => Math.max(h.length, ...body.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i < 2 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  return [line(HEAD), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

export function markdownTable<R = Row>(rows: R[], head = HEAD, toCells: (r: R) => string[] = cells as unknown as (r: R) => string[]): string {
  const line = (c: string[]) => `| ${c.join(' | ')} |`;
  return [line(head), line(head.map((_, i) => (i < 2 ? '---' : '---:'))), ...rows.map((r) => line(toCells(r)))].join('\n');
}

const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

/** The speed issue's targets (bench/targets.ts) checked against one run, and what DPoP and the latency rows cost. */
export function targetNotes(rows: Row[]): string[] {
  const notes = checkTargets(rows).map((c) => `${c.row.id} (${c.row.db}): ${describe(c)} — target ${c.target.text}: ${met(c.met)}` +
    (c.target.workersAuto && !columnOf(c.row.db).workersAuto ? ' (measured with one process: run with --workers 1,auto)' : ''));
  const cpu = (r: Row) => (r.cpuRatio === undefined ? '' : ` (by CPU per request: ${percent(r.cpuRatio)})`);
  for (const r of rows) {
    const f = r.figures;
    if ((r.id === 'cc-dpop' || r.id === 'user-dpop') && r.ratio !== undefined) {
      // The cost of DPoP (RFC 9449): the same request without it is the row's ceiling.
      const base = rows.find((b) => b.db === r.db && b.id === r.id.replace('-dpop', ''))?.figures.cpuPerRequestUs;
      const extra = base !== undefined && f.cpuPerRequestUs !== undefined ? `, +${(f.cpuPerRequestUs - base).toFixed(0)} µs CPU per request` : '';
      notes.push(`${r.id === 'cc-dpop' ? 'client_credentials' : '/user'} with DPoP (${r.db}): ${percent(r.ratio)} of the same without DPoP${cpu(r)}${extra}`);
    }
    if (r.id === 'wakeup-200' || r.id === 'callback' || r.id === 'callback-200') {
      notes.push(`${r.id} (${r.db}): p50 ${ms(f.p50)} ms, p99 ${ms(f.p99)} ms at ${f.rps.toFixed(0)}/s`);
    }
    if (r.id === 'webhooks') notes.push(`webhooks at 2,000 events/s (${r.db}): ${f.rps.toFixed(0)} deliveries/s, delay p50 ${ms(f.p50)} ms, p99 ${ms(f.p99)} ms`);
  }
  return notes;
}

/**
 * Rewrites the generated part of `path` between `<!-- NAME:start … -->` and
 * `<!-- NAME:end -->`, keeping everything around it, so notes written by
 * hand survive a re-run.
 */
export function replaceSection(path: string, name: string, generated: string): void {
  const start = `<!-- ${name}:start (generated by \`npm run bench\`; edit outside these markers) -->`;
  const end = `<!-- ${name}:end -->`;
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const a = current.indexOf(`<!-- ${name}:start`);
  const b = current.indexOf(end);
  const block = `${start}\n${generated}\n${end}`;
  const next = a >= 0 && b > a ? current.slice(0, a) + block + current.slice(b + end.length) : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, next);
}

export function writeMarkdown(path: string, runs: Run[], meta: { command: string; scenarioLabels: Map<string, string>; settings: string; chart?: string; notes?: (rows: Row[]) => string[] }): void {
  const labels = [...meta.scenarioLabels].map(([id, label]) => `- \`${id}\`: ${label}`).join('\n');
  const tables = runs.map((run, i) => {
    const notes = (meta.notes ?? targetNotes)(run.rows).map((n) => `- ${n}`).join('\n');
    const title = runs.length > 1 ? `### Run ${i + 1} of ${runs.length}` : '### Results';
    return `${title} (load average ${run.load[0].toFixed(2)} at the start, ${run.load[1].toFixed(2)} at the end)\n\n${markdownTable(run.rows)}\n${notes ? `\n${notes}\n` : ''}`;
  }).join('\n');
  replaceSection(path, 'bench', [
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`${meta.command}\`.`,
    '',
    `Machine: ${machine()}.`,
    '',
    `Load: ${meta.settings}.`,
    '',
    ...(meta.chart ? [`Chart: [${meta.chart.replace(/^\.\//, '')}](${meta.chart}) (the mean of the runs below; shown at the top of this page).`, ''] : []),
    tables,
    'Scenarios:',
    '',
    labels,
  ].join('\n'));
}
