import { writeFileSync } from 'node:fs';
import type { Figures } from './load.js';
import type { Row, Run } from './report.js';
import { TARGETS } from './targets.js';

/**
 * docs/benchmarks.svg: one group of bars per scenario (Gatehouse on each
 * database, node-oidc-provider doing the same work, and the ceiling the row
 * is divided by), on a logarithmic req/s axis so that equal ratios look
 * equally long from 100 logins/s to 70,000 bare requests/s; below, the two
 * latency scenarios against their targets. Plain SVG, no dependencies.
 */

const GROUPS: { id: string; title: string; unit?: string }[] = [
  { id: 'cc', title: 'client_credentials, JWT' },
  { id: 'cc-opaque', title: 'client_credentials, opaque' },
  { id: 'code', title: 'code + PKCE → tokens' },
  { id: 'refresh', title: 'refresh with rotation' },
  { id: 'introspect', title: 'introspection, JWT' },
  { id: 'introspect-opaque', title: 'introspection, opaque' },
  { id: 'user', title: '/user with a JWT (resource server)' },
  { id: 'send', title: 'Bot API sendMessage' },
  { id: 'login', title: 'password login (argon2id m=19 MiB, t=2, p=1)', unit: 'logins/s' },
  { id: 'wakeup', title: 'getUpdates wake-ups (1,000 messages/s offered)', unit: 'msg/s' },
  { id: 'webhooks-max', title: 'webhook deliveries, events produced flat out', unit: 'deliveries/s' },
];

/** The issue's targets for a group, as one line ("≥ 2× the peer; ≥ 1.5× the peer on PostgreSQL"). */
const targetText = (id: string) => [...new Set(TARGETS.filter((t) => t.row === id && t.against !== 'p99').map((t) => t.text))].join('; ');

/** The columns drawn: each database, and for client_credentials (whose target is for all cores) its workers=auto column too. */
const columnsOf = (id: string, rows: Row[]) => {
  const dbs = [...new Set(rows.filter((r) => r.db === 'sqlite' || r.db === 'postgres' || (id === 'cc' && /^(sqlite|postgres)\/workers=auto$/.test(r.db))).map((r) => r.db))];
  return dbs.map((db) => rows.find((r) => r.id === id && r.db === db)).filter((r): r is Row => r !== undefined);
};
const columnName = (db: string) => `Gatehouse, ${db.startsWith('sqlite') ? 'SQLite' : 'PostgreSQL'}${db.includes('workers=auto') ? ', all cores' : ''}`;
/** The bar the targets are read against: bare node:http (the issue's ceiling), or the bare Fastify mean in an older run without it. */
function bareCeiling(rows: Row[]): { name: string; rps: number } {
  const http = rows.find((r) => r.id === 'http');
  if (http) return { name: 'bare node:http', rps: http.figures.rps };
  const fastify = rows.filter((r) => r.id === 'fastify' || r.id === 'fastify-end');
  return { name: 'bare Fastify', rps: fastify.reduce((a, r) => a + r.figures.rps, 0) / Math.max(1, fastify.length) };
}
const colorOf = (db: string) => COLORS[db.startsWith('sqlite') ? 'sqlite' : 'postgres'];

const COLORS = { sqlite: '#2b6cb0', postgres: '#2c7a7b', peer: '#dd6b20', ceiling: '#a0aec0' } as const;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n >= 10 ? n.toFixed(0) : String(Number(n.toFixed(1))));

interface Bar {
  label: string;
  value: number;
  color: string;
  note: string;
}

export function chartSvg(rows: Row[], title: string): string {
  const W = 980;
  const left = 250;
  const right = 190;
  const plot = W - left - right;
  const [lo, hi] = [10, 200_000];
  const x = (v: number) => left + (plot * (Math.log10(Math.max(lo, v)) - Math.log10(lo))) / (Math.log10(hi) - Math.log10(lo));
  const BAR = 13;
  const out: string[] = [];
  let y = 58;

  const dbs = [...new Set(rows.filter((r) => r.db === 'sqlite' || r.db === 'postgres').map((r) => r.db))];
  const bare = bareCeiling(rows);

  for (const g of GROUPS) {
    const own = columnsOf(g.id, rows);
    if (!own.length) continue;
    const bars: Bar[] = own.map((r) => ({
      label: columnName(r.db),
      value: r.figures.rps,
      color: colorOf(r.db),
      note: [r.ratio !== undefined && r.ceiling === 'fastify' ? `${(r.figures.rps / bare.rps).toFixed(2)}× ${bare.name}` : '', r.peerRatio !== undefined ? `${r.peerRatio.toFixed(1)}× peer` : ''].filter(Boolean).join(' · '),
    }));
    const peer = own[0]!.peer ? rows.find((r) => r.id === own[0]!.peer) : undefined;
    if (peer) bars.push({ label: 'node-oidc-provider', value: peer.figures.rps, color: COLORS.peer, note: '' });
    if (!g.id.startsWith('webhooks') && g.id !== 'wakeup' && g.id !== 'login') {
      const c = own[0]!.ceiling;
      const ceilingRow = c === 'fastify' ? undefined : rows.find((r) => r.id === c && r.db === own[0]!.db);
      bars.push({ label: c === 'fastify' ? `ceiling: ${bare.name}` : `ceiling: ${c}`, value: ceilingRow ? ceilingRow.figures.rps : bare.rps, color: COLORS.ceiling, note: '' });
    }
    out.push(`<text x="12" y="${y + 10}" class="g">${esc(g.title)}${targetText(g.id) ? ` <tspan class="t">(target ${esc(targetText(g.id))})</tspan>` : ''}</text>`);
    y += 16;
    for (const b of bars) {
      const w = Math.max(1, x(b.value) - left);
      out.push(`<text x="${left - 8}" y="${y + 10}" class="l">${esc(b.label)}</text>`);
      out.push(`<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${BAR}" fill="${b.color}" rx="2"><title>${esc(`${g.title}, ${b.label}: ${fmt(b.value)} ${g.unit ?? 'req/s'}`)}</title></rect>`);
      out.push(`<text x="${(left + w + 5).toFixed(1)}" y="${y + 10}" class="v">${fmt(b.value)} ${g.unit ?? '/s'}${b.note ? ` · ${esc(b.note)}` : ''}</text>`);
      y += BAR + 3;
    }
    y += 12;
  }
  const axisY = y;
  const grid: string[] = [];
  for (let v = lo; v <= hi; v *= 10) {
    grid.push(`<line x1="${x(v).toFixed(1)}" y1="44" x2="${x(v).toFixed(1)}" y2="${axisY}" class="grid"/>`);
    grid.push(`<text x="${x(v).toFixed(1)}" y="${axisY + 14}" class="a">${fmt(v)}</text>`);
  }
  y = axisY + 40;

  // Latency: wake-ups (target p99 < 10 ms) and webhook delay at 2,000 events/s (target p50 < 20 ms).
  const lat: string[] = [];
  const latRows = dbs.flatMap((db) => [rows.find((r) => r.id === 'wakeup' && r.db === db), rows.find((r) => r.id === 'webhooks' && r.db === db)]).filter((r): r is Row => r !== undefined);
  if (latRows.length) {
    const [llo, lhi] = [0.5, 10_000];
    const lx = (v: number) => left + (plot * (Math.log10(Math.min(lhi, Math.max(llo, v))) - Math.log10(llo))) / (Math.log10(lhi) - Math.log10(llo));
    lat.push(`<text x="12" y="${y}" class="h">Latency, ms (logarithmic)</text>`);
    y += 34;
    const top = y;
    for (const r of latRows) {
      const name = `${r.id === 'wakeup' ? 'getUpdates wake-up' : 'webhook event → arrival'}, ${r.db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`;
      const target = r.id === 'wakeup' ? 'target p99 < 10 ms' : 'target p50 < 20 ms';
      for (const [q, v] of [['p50', r.figures.p50], ['p99', r.figures.p99]] as const) {
        lat.push(`<text x="${left - 8}" y="${y + 10}" class="l">${esc(`${name} ${q}`)}</text>`);
        lat.push(`<rect x="${left}" y="${y}" width="${Math.max(1, lx(v) - left).toFixed(1)}" height="${BAR}" fill="${COLORS[r.db as 'sqlite' | 'postgres']}" opacity="${q === 'p50' ? 1 : 0.6}" rx="2"/>`);
        lat.push(`<text x="${(lx(v) + 5).toFixed(1)}" y="${y + 10}" class="v">${fmt(v)} ms${q === (r.id === 'wakeup' ? 'p99' : 'p50') ? esc(` (${target})`) : ''}</text>`);
        y += BAR + 3;
      }
      y += 6;
    }
    // Grid and target lines go under the bars.
    const under: string[] = [];
    for (const v of [1, 10, 100, 1000, 10_000]) {
      under.push(`<line x1="${lx(v).toFixed(1)}" y1="${top - 4}" x2="${lx(v).toFixed(1)}" y2="${y}" class="grid"/><text x="${lx(v).toFixed(1)}" y="${y + 12}" class="a">${fmt(v)} ms</text>`);
    }
    for (const [v, label, dy] of [[10, 'wake-up p99 target: 10 ms', 18], [20, 'webhook p50 target: 20 ms', 6]] as const) {
      under.push(`<line x1="${lx(v).toFixed(1)}" y1="${top - dy - 2}" x2="${lx(v).toFixed(1)}" y2="${y}" class="target"/><text x="${(lx(v) + 4).toFixed(1)}" y="${top - dy}" class="v">${label}</text>`);
    }
    lat.splice(1, 0, ...under);
    y += 24;
  }

  const legend = [['Gatehouse, SQLite', COLORS.sqlite], ['Gatehouse, PostgreSQL', COLORS.postgres], ['node-oidc-provider', COLORS.peer], ['ceiling', COLORS.ceiling]]
    .map(([l, c], i) => `<rect x="${left + i * 170}" y="30" width="12" height="12" fill="${c}"/><text x="${left + i * 170 + 16}" y="40" class="v">${l}</text>`).join('');
  const H = y + 10;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif">
<style>.g{font-size:12px;font-weight:600;fill:#1a202c}.l{font-size:11px;fill:#4a5568;text-anchor:end}.v{font-size:11px;fill:#2d3748}.a{font-size:10px;fill:#718096;text-anchor:middle}.h{font-size:14px;font-weight:600;fill:#1a202c}.grid{stroke:#e2e8f0}.target{stroke:#e53e3e;stroke-dasharray:4 3}.t{font-weight:400;fill:#718096}</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="12" y="20" class="h">${esc(title)}</text>
${legend}
${grid.join('\n')}
${out.join('\n')}
<text x="${left + plot / 2}" y="${axisY + 30}" class="a">requests (or messages, deliveries) per second, logarithmic</text>
${lat.join('\n')}
</svg>
`;
}

export function writeChart(path: string, rows: Row[], title: string): void {
  writeFileSync(path, chartSvg(rows, title));
}

/** A target of the issue, drawn as a mark on a group's axis: where the bar must reach (or stay under, for latency). */
interface Target {
  /** What the target is measured against ("40% of the ceiling"); none for a fixed number. */
  label?: string;
  value: number;
}

/** The throughput targets (bench/targets.ts) in the units of each group's axis: from the bare node:http row and the peer shown beside it. */
function targetsOf(id: string, http: number | undefined, peer: number | undefined): Target[] {
  return TARGETS.filter((t) => t.row === id).flatMap((t): Target[] => {
    const where = t.dbs.length === 1 ? (t.dbs[0] === 'sqlite' ? ', SQLite' : ', PostgreSQL') : '';
    if (t.against === 'peer' && peer !== undefined) return [{ label: `${t.value}× the peer${where}`, value: peer * t.value }];
    if (t.against === 'http' && http !== undefined) return [{ label: `${t.value}× bare node:http${where}`, value: http * t.value }];
    if (t.against === 'rps') return [{ value: t.value }];
    return [];
  });
}

/** 1, 2 or 5 times a power of ten, at least `v`: a round end for an axis. */
function niceMax(v: number): number {
  const p = 10 ** Math.floor(Math.log10(Math.max(v, 1e-9)));
  return ([1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].find((m) => m * p >= v) ?? 10) * p;
}

/**
 * docs/img/benchmarks.svg for the README: the same figures as chartSvg, each
 * group on a LINEAR axis of its own that starts at zero (bars compare by
 * length within a group; a login at 150/s and a bare route at 60,000/s
 * cannot share one linear axis and both stay readable), with the issue's
 * targets drawn on it as dashed red marks: throughput bars must reach them,
 * latency bars must stay left of them.
 */
export function linearChartSvg(rows: Row[], title: string): string {
  const W = 980;
  const left = 250;
  const right = 150;
  const plot = W - left - right;
  const BAR = 13;
  const out: string[] = [];
  let y = 58;
  const dbs = [...new Set(rows.filter((r) => r.db === 'sqlite' || r.db === 'postgres').map((r) => r.db))];
  const dbName = (db: string) => (db === 'sqlite' ? 'SQLite' : 'PostgreSQL');
  const bare = bareCeiling(rows);

  /** One group: its title, bars, target marks and a linear axis from 0. */
  const group = (heading: string, bars: Bar[], targets: Target[], unit: string) => {
    const max = niceMax(Math.max(...bars.map((b) => b.value), ...targets.map((t) => t.value)) * 1.05);
    const x = (v: number) => left + (plot * Math.max(0, v)) / max;
    out.push(`<text x="12" y="${y + 10}" class="g">${esc(heading)}</text>`);
    y += 16 + targets.length * 13;
    const top = y;
    for (const b of bars) {
      out.push(`<text x="${left - 8}" y="${y + 10}" class="l">${esc(b.label)}</text>`);
      out.push(`<rect x="${left}" y="${y}" width="${Math.max(1, x(b.value) - left).toFixed(1)}" height="${BAR}" fill="${b.color}" rx="2"><title>${esc(`${heading}, ${b.label}: ${fmt(b.value)} ${unit}`)}</title></rect>`);
      out.push(`<text x="${(x(b.value) + 5).toFixed(1)}" y="${y + 10}" class="v">${fmt(b.value)} ${unit}${b.note ? ` · ${esc(b.note)}` : ''}</text>`);
      y += BAR + 3;
    }
    const under: string[] = [];
    for (let i = 0; i <= 4; i++) {
      const v = (max * i) / 4;
      under.push(`<line x1="${x(v).toFixed(1)}" y1="${top - 2}" x2="${x(v).toFixed(1)}" y2="${y}" class="grid"/><text x="${x(v).toFixed(1)}" y="${y + 11}" class="a">${fmt(v)}</text>`);
    }
    targets.forEach((t, i) => {
      const ty = top - (targets.length - i) * 13;
      under.push(`<line x1="${x(t.value).toFixed(1)}" y1="${ty + 3}" x2="${x(t.value).toFixed(1)}" y2="${y}" class="target"/>`);
      // A mark in the right part of the axis is labelled to its left, so the words stay inside the picture.
      const end = x(t.value) > left + plot * 0.55;
      under.push(`<text x="${(x(t.value) + (end ? -4 : 4)).toFixed(1)}" y="${ty + 9}" class="tl"${end ? ' text-anchor="end"' : ''}>target: ${t.label ? `${esc(t.label)} = ` : ''}${fmt(t.value)} ${unit}</text>`);
    });
    out.splice(out.length - bars.length * 3, 0, ...under);
    y += 26;
  };

  for (const g of GROUPS) {
    const own = columnsOf(g.id, rows);
    if (!own.length) continue;
    const bars: Bar[] = own.map((r) => ({ label: columnName(r.db), value: r.figures.rps, color: colorOf(r.db), note: '' }));
    const peer = own[0]!.peer ? rows.find((r) => r.id === own[0]!.peer) : undefined;
    if (peer) bars.push({ label: 'node-oidc-provider', value: peer.figures.rps, color: COLORS.peer, note: '' });
    let ceiling: number | undefined;
    if (!g.id.startsWith('webhooks') && g.id !== 'wakeup' && g.id !== 'login') {
      const c = own[0]!.ceiling;
      const ceilingRow = c === 'fastify' ? undefined : rows.find((r) => r.id === c && r.db === own[0]!.db);
      ceiling = ceilingRow ? ceilingRow.figures.rps : bare.rps;
      bars.push({ label: c === 'fastify' ? `ceiling: ${bare.name}` : `ceiling: ${c}`, value: ceiling, color: COLORS.ceiling, note: '' });
    }
    group(g.title, bars, targetsOf(g.id, rows.find((r) => r.id === 'http')?.figures.rps, peer?.figures.rps), g.unit ?? 'req/s');
  }

  // Latency, each measurement on its own linear axis in ms, its target marked.
  for (const [id, name, target] of [['wakeup', 'getUpdates wake-up latency (1,000 messages/s), target p99 under', 10], ['webhooks', 'webhook event → arrival (2,000 events/s), target p50 under', 20]] as const) {
    const latRows = dbs.map((db) => rows.find((r) => r.id === id && r.db === db)).filter((r): r is Row => r !== undefined);
    if (!latRows.length) continue;
    const bars = latRows.flatMap((r) => (['p50', 'p99'] as const).map((q) => ({ label: `${dbName(r.db)}, ${q}`, value: r.figures[q], color: COLORS[r.db as 'sqlite' | 'postgres'], note: '' })));
    group(`${name} ${target} ms`, bars, [{ value: target }], 'ms');
  }

  const legend = [['Gatehouse, SQLite', COLORS.sqlite], ['Gatehouse, PostgreSQL', COLORS.postgres], ['node-oidc-provider', COLORS.peer], ['ceiling', COLORS.ceiling]]
    .map(([l, c], i) => `<rect x="${left + i * 170}" y="30" width="12" height="12" fill="${c}"/><text x="${left + i * 170 + 16}" y="40" class="v">${l}</text>`).join('');
  const H = y + 10;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif">
<style>.g{font-size:12px;font-weight:600;fill:#1a202c}.l{font-size:11px;fill:#4a5568;text-anchor:end}.v{font-size:11px;fill:#2d3748}.a{font-size:10px;fill:#718096;text-anchor:middle}.h{font-size:14px;font-weight:600;fill:#1a202c}.grid{stroke:#e2e8f0}.target{stroke:#c53030;stroke-width:1.5;stroke-dasharray:4 3}.tl{font-size:10.5px;fill:#c53030}.v,.tl{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="12" y="20" class="h">${esc(title)}</text>
${legend}
${out.join('\n')}
</svg>
`;
}

/** The rows of each run table between the bench markers of docs/benchmarks.md (bench/report.ts writes them). */
export function runsFromMarkdown(markdown: string): { runs: Run[]; measured: string } {
  const start = markdown.indexOf('<!-- bench:start');
  const end = markdown.indexOf('<!-- bench:end -->');
  if (start < 0 || end < start) throw new Error('docs/benchmarks.md has no bench section: run `npm run bench` first');
  const section = markdown.slice(start, end);
  const measured = /Measured (\d{4}-\d\d-\d\d)/.exec(section)?.[1] ?? '';
  const runs = section.split(/^### /m).slice(1).map((part): Run => {
    const load = /load average ([\d.]+) at the start, ([\d.]+) at the end/.exec(part);
    const lines = part.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| scenario') && !l.startsWith('| ---'));
    const cells = lines.map((l) => l.slice(2, -2).split(' | ').map((c) => c.trim()));
    const ids = new Set(cells.map((c) => c[0]!));
    const num = (c: string) => (c === '-' ? undefined : Number.parseFloat(c));
    const rows = cells.map(([id, db, rps, p50, p99, non2xx, errors, vsCeiling, vsPeer, cpu, serverCpu]): Row => {
      const figures: Figures = {
        rps: num(rps!) ?? 0, p50: num(p50!) ?? 0, p99: num(p99!) ?? 0, total: 0, non2xx: num(non2xx!) ?? 0, errors: num(errors!) ?? 0,
        cpuPerRequestUs: num(cpu!), serverCpuShare: serverCpu === '-' ? undefined : (num(serverCpu!) ?? 0) / 100,
      };
      // "43% of api-healthz" names the row it was divided by; a plain percentage is bare Fastify.
      const ceiling = / of (\S+)$/.exec(vsCeiling!)?.[1] ?? 'fastify';
      // The peer doing the same work: peer-<id>, or the one an opaque variant shares (introspect-opaque → peer-introspect).
      const peer = vsPeer === '-' ? undefined : [`peer-${id}`, `peer-${id!.replace(/-opaque$/, '')}`].find((p) => ids.has(p));
      return { id: id!, label: id!, db: db!, figures, ceiling, peer, ratio: undefined, cpuRatio: undefined, peerRatio: undefined, peerCpuRatio: undefined };
    });
    return { rows, load: [Number(load?.[1] ?? NaN), Number(load?.[2] ?? NaN)] };
  }).filter((r) => r.rows.length > 0);
  if (!runs.length) throw new Error('no run tables in the bench section of docs/benchmarks.md');
  return { runs, measured };
}
