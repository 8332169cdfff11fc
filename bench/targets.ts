import type { Row } from './report.js';

/**
 * The speed issue's targets (issue 16, "Targets"), in one place: the report's
 * notes (bench/report.ts) and the charts' red marks (bench/chart.ts) both read
 * them. Each is a ratio in one run, so a loaded machine moves both sides.
 */
export interface Target {
  /** The scenario id the target is about. */
  row: string;
  /** The databases it is set for ("SQLite unless named"). */
  dbs: ('sqlite' | 'postgres')[];
  /** What the row is divided by: the peer, the bare node:http row, its own ceiling row, or a fixed figure of its own. */
  against: 'peer' | 'http' | 'own' | 'rps' | 'p99';
  /** At least (or, for p99, below) this. */
  value: number;
  /** Only for a column measured with GATEHOUSE_WORKERS=auto. */
  workersAuto?: boolean;
  /** How the target reads in the issue. */
  text: string;
}

const both: Target['dbs'] = ['sqlite', 'postgres'];
/** The issue's table: "SQLite unless named". */
const sqlite: Target['dbs'] = ['sqlite'];

export const TARGETS: Target[] = [
  { row: 'cc', dbs: sqlite, against: 'peer', value: 3, workersAuto: true, text: '≥ 3× node-oidc-provider with GATEHOUSE_WORKERS=auto' },
  { row: 'cc', dbs: sqlite, against: 'http', value: 0.25, workersAuto: true, text: '≥ 0.25× bare node:http with GATEHOUSE_WORKERS=auto' },
  { row: 'cc-opaque', dbs: sqlite, against: 'peer', value: 2, text: '≥ 2× the peer' },
  { row: 'cc-opaque', dbs: ['postgres'], against: 'peer', value: 1.5, text: '≥ 1.5× the peer on PostgreSQL' },
  { row: 'refresh', dbs: sqlite, against: 'peer', value: 2, text: '≥ 2× the peer' },
  { row: 'refresh', dbs: ['postgres'], against: 'peer', value: 1.5, text: '≥ 1.5× the peer on PostgreSQL' },
  { row: 'introspect', dbs: both, against: 'peer', value: 2, text: '≥ 2× the peer' },
  { row: 'introspect-opaque', dbs: both, against: 'peer', value: 2, text: '≥ 2× the peer' },
  { row: 'code', dbs: sqlite, against: 'http', value: 0.1, text: '≥ 0.10× bare node:http' },
  { row: 'send', dbs: sqlite, against: 'http', value: 0.25, text: '≥ 0.25× bare node:http' },
  { row: 'send', dbs: ['postgres'], against: 'http', value: 0.12, text: '≥ 0.12× bare node:http on PostgreSQL' },
  { row: 'wakeup', dbs: both, against: 'p99', value: 10, text: 'p99 < 10 ms at 1,000 messages/s' },
  { row: 'webhooks-max', dbs: both, against: 'rps', value: 3000, text: '≥ 3,000 deliveries/s' },
  // Issue 16's row is SQLite's; issue 11 asks the same of recording on any database.
  { row: 'cc-subscribed', dbs: both, against: 'own', value: 0.8, text: '≤ 20% below the row without (issue 11 as well)' },
  // An earlier issue's, still held.
  { row: 'login', dbs: both, against: 'rps', value: 150, text: '≥ 150 logins/s' },
];

/** `sqlite/workers=auto` → its database and whether it ran with workers=auto. */
export function columnOf(db: string): { db: string; workersAuto: boolean } {
  const [base = db, ...rest] = db.split('/');
  return { db: base, workersAuto: rest.includes('workers=auto') };
}

export interface Checked {
  target: Target;
  row: Row;
  /** The figure compared (a ratio, req/s or ms). */
  figure: number;
  /** The same ratio by CPU per request, where there is one. */
  cpuFigure: number | undefined;
  met: boolean;
}

/** Every target that applies to a row of this run, with its figure. */
export function checkTargets(rows: Row[]): Checked[] {
  const http = rows.find((r) => r.id === 'http')?.figures;
  const out: Checked[] = [];
  for (const row of rows) {
    const col = columnOf(row.db);
    for (const target of TARGETS) {
      if (target.row !== row.id || !target.dbs.includes(col.db as 'sqlite')) continue;
      // The workers=auto target is read on that column; without one in the run, on the default column (said so in the note).
      if (target.workersAuto && !col.workersAuto && rows.some((r) => r.id === row.id && columnOf(r.db).workersAuto)) continue;
      const f = row.figures;
      let figure: number | undefined;
      let cpuFigure: number | undefined;
      if (target.against === 'peer') [figure, cpuFigure] = [row.peerRatio, row.peerCpuRatio];
      else if (target.against === 'own') [figure, cpuFigure] = [row.ratio, row.cpuRatio];
      else if (target.against === 'http' && http) {
        figure = f.rps / http.rps;
        cpuFigure = http.cpuPerRequestUs !== undefined && f.cpuPerRequestUs ? http.cpuPerRequestUs / f.cpuPerRequestUs : undefined;
      } else if (target.against === 'rps') figure = f.rps;
      else if (target.against === 'p99') figure = f.p99;
      if (figure === undefined) continue;
      out.push({ target, row, figure, cpuFigure, met: target.against === 'p99' ? figure < target.value : figure >= target.value });
    }
  }
  return out;
}

/** The target's figure in its own words: "2.4×", "31%", "3,120/s", "p99 4.6 ms". */
export function describe(c: Checked): string {
  const t = c.target;
  const ratio = (x: number) => (t.against === 'own' ? `${(x * 100).toFixed(0)}%` : `${x.toFixed(t.against === 'http' ? 2 : 1)}×`);
  if (t.against === 'rps') return `${c.figure.toFixed(0)}/s`;
  if (t.against === 'p99') return `p50 ${c.row.figures.p50.toFixed(2)} ms, p99 ${c.figure.toFixed(2)} ms`;
  return `${ratio(c.figure)}${c.cpuFigure === undefined ? '' : ` (by CPU per request: ${ratio(c.cpuFigure)})`}`;
}
