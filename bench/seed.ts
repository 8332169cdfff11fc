/**
 * `npm run bench -- --seed 1000000[,10000000]`: how per-request cost moves
 * with stored data. For each database: the token and introspection scenarios
 * with an empty token store, then again after bulk-loading N stored tokens
 * and grants (then M), then once more while a purge deletes a backlog of
 * expired rows (src/store/tokens.ts purgeExpired, in bounded batches) from
 * another process, to show service goes on meanwhile.
 *
 * Bulk loading writes the rows Gatehouse would write (keys, families,
 * times), straight into the tables, with every index in place: SQLite
 * through one prepared INSERT in transactions of 500,000 tokens, PostgreSQL
 * through COPY … FROM STDIN, a transaction per 500,000 tokens; both without
 * waiting for a flush per commit on the seeding connection only. Keys and
 * family ids are time-ordered (src/core/oauth/token-key.ts), as if issued
 * one a millisecond until now, or until the oldest token of an earlier load.
 *
 * With `--gatehouse NAME=PATH` each checkout is measured in turn on a
 * database of its own, seeded by that checkout's bench/seed.ts (the rows its
 * Gatehouse writes); `--only` keeps the listed scenarios and skips the purge.
 */
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { GATEHOUSE_BIN, startGatehouse, type DbKind, type GatehouseUnderTest } from './gatehouse.js';
import { measure, type Figures, type LoadOptions } from './load.js';
import { startChild, stopChild } from './procs.js';
import { loadAverage, machine, markdownTable, percent, replaceSection } from './report.js';
import { gatehouseScenarios, type Server } from './scenarios.js';
import { PURGE_BATCH } from '../src/store/purge.js';
import { timePart, uuidV7Of } from '../src/core/oauth/token-key.js';

/** Tokens a transaction: big enough that per-statement and per-commit costs vanish, small enough to stay in memory. */
const CHUNK = 500_000;
const HOUR = 3600_000;

/** What one seeded slice holds: half opaque access tokens, half refresh tokens, one grant (token family) per two of each. */
interface Slice {
  families: string[];
  access: { hash: string[]; jti: string[]; family: string[] };
  refresh: { hash: string[]; family: string[] };
}

/** `n` random base64url ids of `bytes` bytes each (a multiple of 3, so each is exactly 4/3 as many characters). */
const ids = (n: number, bytes: number) => {
  const len = (bytes * 4) / 3;
  const all = randomBytes(n * bytes).toString('base64url');
  return Array.from({ length: n }, (_, i) => all.slice(i * len, (i + 1) * len));
};

/** Keys as Gatehouse stores them (src/core/oauth/token-key.ts): the issue time, then a hash (here random), one millisecond apart from `from`. */
const keys = (n: number, from: number) => ids(n, 33).map((h, i) => timePart(from + i) + h.slice(0, 43));

/** Family ids as Gatehouse makes them (UUID version 7, token-key.ts newFamilyId), created at `times(i)`. */
const familyIds = (n: number, times: (i: number) => number) => {
  const all = randomBytes(n * 16);
  return Array.from({ length: n }, (_, i) => uuidV7Of(all.subarray(i * 16, (i + 1) * 16), times(i)));
};

/** `first`: the issue time of its first token; the access tokens come first, then the refresh tokens. */
function slice(tokens: number, first: number): Slice {
  const half = Math.floor(tokens / 2);
  const fam = familyIds(Math.ceil(half / 2), (i) => first + 2 * i);
  const familyOf = (i: number) => fam[Math.floor(i / 2)]!;
  return {
    families: fam,
    access: { hash: keys(half, first), jti: ids(half, 18), family: Array.from({ length: half }, (_, i) => familyOf(i)) },
    refresh: { hash: keys(tokens - half, first + half), family: Array.from({ length: tokens - half }, (_, i) => familyOf(Math.min(i, half - 1))) },
  };
}

/**
 * When the seeded tokens end: now, or just before the oldest key already
 * stored (an earlier step's seed), so a second load goes before the first
 * instead of between its rows, as a store that grew over time would hold it.
 */
function seedEnd(now: number, oldestKeys: (string | null | undefined)[]): number {
  const times = oldestKeys.filter((k): k is string => typeof k === 'string' && k.length === 52).map((k) => parseInt(k.slice(0, 9), 36));
  return Math.min(now, ...times);
}

/** A COPY text-format row: fields joined by tabs, null as \N (the seeded values need no escaping: base64url, hex, digits). */
const copyRow = (fields: (string | number | null)[]) => `${fields.map((f) => (f === null ? '\\N' : String(f))).join('\t')}\n`;

/**
 * Adds `tokens` stored tokens (and their grants) owned by `clientId`,
 * expiring in an hour, or expired an hour ago when `expired`.
 */
export async function seedTokens(databaseUrl: string, tokens: number, clientId: string, expired: boolean): Promise<void> {
  const now = Date.now();
  const expiresAt = expired ? now - HOUR : now + HOUR;
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SQLite(databaseUrl.slice('sqlite:'.length));
    db.pragma('busy_timeout = 10000');
    // This connection only, for the load: no fsync per commit (a crash would only lose the seed), and a page cache
    // big enough for the right edges of every index (the server's connections keep their own settings).
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    const oldest = (t: string) => (db.prepare(`SELECT min(token_hash) AS k FROM ${t}`).get() as { k: string | null }).k;
    // Issued one a millisecond until the end (the key's time part only: created_at stays `now`).
    const end = seedEnd(now, [oldest('access_tokens'), oldest('refresh_tokens')]);
    const fam = db.prepare('INSERT INTO token_families (id, client_id, user_id, scope, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)');
    const at = db.prepare('INSERT INTO access_tokens (token_hash, jti, family_id, client_id, user_id, scope, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)');
    const rt = db.prepare('INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, scope, created_at, expires_at, rotated_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)');
    try {
      for (let done = 0; done < tokens; done += CHUNK) {
        const s = slice(Math.min(CHUNK, tokens - done), end - tokens + done);
        db.transaction(() => {
          for (const id of s.families) fam.run(id, clientId, 'seed-user', 'user', now);
          s.access.hash.forEach((h, i) => at.run(h, s.access.jti[i], s.access.family[i], clientId, 'seed-user', 'user', now, expiresAt));
          s.refresh.hash.forEach((h, i) => rt.run(h, s.refresh.family[i], clientId, 'seed-user', 'user', now, expiresAt));
        })();
      }
      // Fold the write-ahead log back into the database, as the next checkpoint would: reads through a
      // WAL of hundreds of megabytes are slower than the steady state. With synchronous back on, the
      // checkpoint ends with an fsync of the database: gigabytes the load left to the kernel's writeback
      // otherwise make the server's first checkpoint fsync wait for them, during the measurement.
      db.pragma('synchronous = NORMAL');
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    return;
  }
  const u = new URL(databaseUrl);
  const schema = u.searchParams.get('schema');
  u.searchParams.delete('schema');
  const c = new pg.Client({ connectionString: u.toString(), ...(schema ? { options: `-c search_path=${schema}` } : {}) });
  await c.connect();
  // COPY FROM STDIN: rows streamed in PostgreSQL's text format, parsed by the server without a statement per row.
  const copy = (table: string, columns: string[], rows: Iterable<string>) =>
    pipeline(Readable.from(batched(rows)), c.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`)));
  try {
    // This session only: a commit does not wait for its WAL flush (a crash would only lose the seed).
    await c.query('SET synchronous_commit = off');
    const oldest = async (t: string) => (await c.query<{ k: string | null }>(`SELECT min(token_hash) AS k FROM ${t}`)).rows[0]?.k;
    const end = seedEnd(now, [await oldest('access_tokens'), await oldest('refresh_tokens')]);
    for (let done = 0; done < tokens; done += CHUNK) {
      const s = slice(Math.min(CHUNK, tokens - done), end - tokens + done);
      await c.query('BEGIN');
      await copy('token_families', ['id', 'client_id', 'user_id', 'scope', 'created_at'],
        s.families.map((id) => copyRow([id, clientId, 'seed-user', 'user', now])));
      await copy('access_tokens', ['token_hash', 'jti', 'family_id', 'client_id', 'user_id', 'scope', 'created_at', 'expires_at'],
        s.access.hash.map((h, i) => copyRow([h, s.access.jti[i]!, s.access.family[i]!, clientId, 'seed-user', 'user', now, expiresAt])));
      await copy('refresh_tokens', ['token_hash', 'family_id', 'client_id', 'user_id', 'scope', 'created_at', 'expires_at'],
        s.refresh.hash.map((h, i) => copyRow([h, s.refresh.family[i]!, clientId, 'seed-user', 'user', now, expiresAt])));
      await c.query('COMMIT');
    }
    // Vacuumed and analysed now, as autovacuum would soon do on tables that grew this much: otherwise
    // it does so during the measurement and takes CPU and I/O from it.
    for (const t of ['token_families', 'access_tokens', 'refresh_tokens']) await c.query(`VACUUM (ANALYZE) ${t}`);
    // Written out now, as the next checkpoint would: else that checkpoint writes the load's
    // gigabytes during the measurement. Needs superuser or pg_checkpoint (PostgreSQL 15); without, it is left to the server.
    await c.query('CHECKPOINT').catch((e: { code?: string }) => {
      if (e.code !== '42501') throw e;
    });
  } finally {
    await c.end();
  }
}

/** Rows joined into strings of about 1 MB: one stream write per row cost more than the server's parsing. */
function* batched(rows: Iterable<string>): Generator<string> {
  let buf: string[] = [];
  let size = 0;
  for (const r of rows) {
    buf.push(r);
    size += r.length;
    if (size >= 1 << 20) {
      yield buf.join('');
      buf = [];
      size = 0;
    }
  }
  if (buf.length) yield buf.join('');
}

interface SeedRow {
  id: string;
  db: string;
  rows: string;
  figures: Figures;
  /** CPU per request relative to the same scenario with an empty store. */
  change: number | undefined;
}

interface PurgeReport {
  deleted: number;
  ms: number;
  /** The longest the purging process's event loop stood still: one batch statement on SQLite. */
  maxStallMs: number;
}

const SCENARIOS = ['cc', 'cc-opaque', 'refresh', 'code', 'introspect', 'introspect-opaque'];
const fmtRows = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

/**
 * Starts the purge's process (bench/servers/purge.ts) and waits until it is
 * ready; `go()` starts the purge and resolves with its report when it is done.
 */
async function purgeProcess(databaseUrl: string): Promise<{ go(): Promise<PurgeReport> }> {
  const script = fileURLToPath(new URL('./servers/purge.ts', import.meta.url));
  const { child } = await startChild('purge', ['--import', 'tsx', script, databaseUrl], (line) => (line.includes('"ready"') ? true : undefined));
  const report = new Promise<PurgeReport>((resolve, reject) => {
    createInterface({ input: child.proc.stdout! }).on('line', (line) => {
      try {
        const j = JSON.parse(line) as PurgeReport;
        if (typeof j.deleted === 'number') resolve(j);
      } catch {
        // not the report
      }
    });
    child.proc.once('exit', (code) => reject(new Error(`purge exited with ${code}: ${child.tail.join('\n')}`)));
  });
  return {
    go() {
      child.proc.stdin!.write('go\n');
      return report;
    },
  };
}

/** A backlog of expired rows the size of the first step, purged while cc-opaque (which writes) runs. */
async function purgeRun(p: {
  gh: GatehouseUnderTest; label: string; scenarios: ReturnType<typeof gatehouseScenarios>; load: LoadOptions; backlog: number; stored: number;
  seed: typeof seedTokens; base: Map<string, number>; rows: SeedRow[]; purges: string[];
}): Promise<void> {
  const { gh, label, backlog, load } = p;
  process.stderr.write(`bench: seed: loading ${fmtRows(backlog)} expired tokens into ${label}…\n`);
  await p.seed(gh.databaseUrl, backlog, gh.ccOpaque.id, true);
  const cc = p.scenarios.find((s) => s.id === 'cc-opaque')!;
  const purge = await purgeProcess(gh.databaseUrl);
  const prepared = await cc.prepare!();
  await measure(prepared, { ...load, duration: Math.max(1, load.warmup), warmup: 0 }, cc.pid);
  process.stderr.write(`bench: seed: cc-opaque (${label}) while purging ${fmtRows(backlog)} expired tokens…\n`);
  const purged = purge.go();
  const figures = await measure(prepared, { ...load, warmup: 0 }, cc.pid);
  const b = p.base.get('cc-opaque');
  p.rows.push({ id: 'cc-opaque', db: label, rows: `${fmtRows(p.stored)}, purging ${fmtRows(backlog)} expired`, figures, change: b && figures.cpuPerRequestUs ? figures.cpuPerRequestUs / b - 1 : undefined });
  const report = await purged;
  p.purges.push(`${label}: purged ${report.deleted.toLocaleString('en-US')} expired rows in ${(report.ms / 1000).toFixed(1)} s ` +
    `(${Math.round(report.deleted / (report.ms / 1000)).toLocaleString('en-US')} rows/s, batches of ${PURGE_BATCH.toLocaleString('en-US')}, paced; longest event-loop stall ${report.maxStallMs.toFixed(0)} ms) ` +
    `while cc-opaque ran at ${figures.rps.toFixed(0)} req/s, p99 ${figures.p99} ms${report.ms / 1000 < load.duration ? ' (the purge ended before the measured seconds did)' : ''}`);
}

/** `seedTokens` of the checkout whose bin/gatehouse.mjs is `bin`: the rows that checkout's Gatehouse writes. */
async function seederOf(bin: string): Promise<typeof seedTokens> {
  if (bin === GATEHOUSE_BIN) return seedTokens;
  const mod = (await import(pathToFileURL(resolve(dirname(bin), '../bench/seed.ts')).href)) as { seedTokens: typeof seedTokens };
  return mod.seedTokens;
}

export async function seedRun(opts: {
  dbs: DbKind[]; sizes: number[]; load: LoadOptions; out: string | undefined; command: string; profileFlags: string[]; fastify: Server;
  /** Checkouts to measure, one after the other (`--gatehouse`); the first one's name is empty. */
  bins?: { name: string; bin: string }[];
  /** `--only`: these scenarios, and no purge. */
  only?: Set<string> | undefined;
}): Promise<void> {
  const rows: SeedRow[] = [];
  const purges: string[] = [];
  const loadAtStart = loadAverage();
  const sizes = [...opts.sizes].sort((a, b) => a - b);
  const bins = opts.bins ?? [{ name: '', bin: GATEHOUSE_BIN }];
  const named = (name: string, db: string) => (bins.length > 1 ? `${db}, ${name || 'this checkout'}` : db);
  for (const db of opts.dbs) {
    for (const { name, bin } of bins) {
      const label = named(name, db);
      const seed = await seederOf(bin);
      // The refresh and code rows need a person and their clients; the others only the client_credentials fixtures.
      const minimal = !!opts.only && !opts.only.has('refresh') && !opts.only.has('code');
      const gh: GatehouseUnderTest = await startGatehouse(db, { nodeFlags: opts.profileFlags, roles: 'auth', minimal, bin });
      const scenarios = gatehouseScenarios(gh, opts.load).filter((s) => SCENARIOS.includes(s.id) && (!opts.only || opts.only.has(s.id)));
      const base = new Map<string, number>();
      const run = async (rowsLabel: string, stored: number) => {
        for (const s of scenarios) {
          process.stderr.write(`bench: seed: ${s.id} (${label}, ${fmtRows(stored)} stored tokens, load ${loadAverage().toFixed(2)})…\n`);
          const figures = await measure(await s.prepare!(), opts.load, s.pid);
          if (rowsLabel === 'warm-up') continue;
          if (stored === 0 && figures.cpuPerRequestUs !== undefined) base.set(s.id, figures.cpuPerRequestUs);
          const b = base.get(s.id);
          rows.push({ id: s.id, db: label, rows: rowsLabel, figures, change: b === undefined || figures.cpuPerRequestUs === undefined ? undefined : figures.cpuPerRequestUs / b - 1 });
        }
      };
      // A first pass warms the JIT and the connections; only the second counts as the empty store's figures.
      await run('warm-up', 0);
      await run('0', 0);
      let stored = 0;
      for (const size of sizes) {
        const t0 = performance.now();
        process.stderr.write(`bench: seed: loading ${fmtRows(size - stored)} tokens and their grants into ${label}…\n`);
        await seed(gh.databaseUrl, size - stored, gh.ccOpaque.id, false);
        const secs = (performance.now() - t0) / 1000;
        purges.push(`${label}: loaded ${fmtRows(size - stored)} tokens (+${fmtRows(Math.ceil((size - stored) / 4))} grants) in ${secs.toFixed(0)} s (${Math.round((size - stored) / secs).toLocaleString('en-US')} tokens/s)`);
        stored = size;
        await run(fmtRows(size), size);
      }
      if (!opts.only) await purgeRun({ gh, label, scenarios, load: opts.load, backlog: sizes[0]!, stored, seed, base, rows, purges });
      await stopChild(gh.child);
    }
  }
  const loadAtEnd = loadAverage();

  const head = ['scenario', 'db', 'stored tokens', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'CPU µs/req', 'server CPU', 'CPU/req vs empty'];
  const cells = (r: SeedRow) => [r.id, r.db, r.rows, r.figures.rps.toFixed(0), r.figures.p50.toFixed(1), r.figures.p99.toFixed(1), String(r.figures.non2xx), String(r.figures.errors),
    r.figures.cpuPerRequestUs?.toFixed(0) ?? '-', percent(r.figures.serverCpuShare), r.change === undefined ? '-' : `${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(0)}%`];
  const ordered = [...rows].sort((a, b) => a.db.localeCompare(b.db) || SCENARIOS.indexOf(a.id) - SCENARIOS.indexOf(b.id));
  console.log(markdownTable(ordered, head, cells));
  for (const p of purges) console.log(`- ${p}`);
  if (opts.out) {
    replaceSection(opts.out, 'bench-seed', [
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`${opts.command}\`; load average ${loadAtStart.toFixed(2)} at the start, ${loadAtEnd.toFixed(2)} at the end.`,
      '',
      `Machine: ${machine()}.`,
      '',
      markdownTable(ordered, head, cells),
      '',
      ...purges.map((p) => `- ${p}`),
    ].join('\n'));
    console.log(`\nwrote ${opts.out}`);
  }
  void opts.fastify;
}
