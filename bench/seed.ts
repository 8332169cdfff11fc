/**
 * `npm run bench -- --seed 1000000[,10000000]`: how per-request cost moves
 * with stored data. For each database: the token and introspection scenarios
 * with an empty token store, then again after bulk-loading N stored tokens
 * and grants (then M), then once more while a purge deletes a backlog of
 * expired rows (src/store/tokens.ts purgeExpired, in bounded batches) from
 * another process, to show service goes on meanwhile.
 *
 * Bulk loading writes the rows Gatehouse would write (keys, families,
 * times), straight into the tables: SQLite through one prepared INSERT in
 * transactions of 50,000 rows, PostgreSQL through INSERT … SELECT FROM
 * unnest($1::text[], …) with 50,000 rows a statement. Keys are time-ordered
 * (src/core/oauth/token-key.ts), as if issued one a millisecond until now.
 *
 * With `--gatehouse NAME=PATH` each checkout is measured in turn on a
 * database of its own, seeded by that checkout's bench/seed.ts (the rows its
 * Gatehouse writes); `--only` keeps the listed scenarios and skips the purge.
 */
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { GATEHOUSE_BIN, startGatehouse, type DbKind, type GatehouseUnderTest } from './gatehouse.js';
import { measure, type Figures, type LoadOptions } from './load.js';
import { startChild, stopChild } from './procs.js';
import { loadAverage, machine, markdownTable, percent, replaceSection } from './report.js';
import { gatehouseScenarios, type Server } from './scenarios.js';
import { PURGE_BATCH } from '../src/store/purge.js';
import { timePart } from '../src/core/oauth/token-key.js';

const CHUNK = 50_000;
const HOUR = 3600_000;

/** What one seeded slice holds: half opaque access tokens, half refresh tokens, one grant (token family) per two of each. */
interface Slice {
  families: { id: string[]; created: number[] };
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

/** `first`: the issue time of its first token; the access tokens come first, then the refresh tokens. */
function slice(tokens: number, first: number): Slice {
  const half = Math.floor(tokens / 2);
  const fam = ids(Math.ceil(half / 2), 18);
  const familyOf = (i: number) => fam[Math.floor(i / 2)]!;
  return {
    families: { id: fam, created: [] },
    access: { hash: keys(half, first), jti: ids(half, 18), family: Array.from({ length: half }, (_, i) => familyOf(i)) },
    refresh: { hash: keys(tokens - half, first + half), family: Array.from({ length: tokens - half }, (_, i) => familyOf(Math.min(i, half - 1))) },
  };
}

/**
 * Adds `tokens` stored tokens (and their grants) owned by `clientId`,
 * expiring in an hour, or expired an hour ago when `expired`.
 */
export async function seedTokens(databaseUrl: string, tokens: number, clientId: string, expired: boolean): Promise<void> {
  const now = Date.now();
  const expiresAt = expired ? now - HOUR : now + HOUR;
  // Issued one a millisecond until now (the key's time part only: created_at stays `now`).
  const issued = (done: number) => now - tokens + done;
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SQLite(databaseUrl.slice('sqlite:'.length));
    db.pragma('busy_timeout = 10000');
    // Random family ids into an index of millions of rows: a page cache larger than the default 2 MB keeps the load quick.
    db.pragma('cache_size = -262144');
    const fam = db.prepare('INSERT INTO token_families (id, client_id, user_id, scope, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)');
    const at = db.prepare('INSERT INTO access_tokens (token_hash, jti, family_id, client_id, user_id, scope, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)');
    const rt = db.prepare('INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, scope, created_at, expires_at, rotated_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)');
    try {
      for (let done = 0; done < tokens; done += CHUNK) {
        const s = slice(Math.min(CHUNK, tokens - done), issued(done));
        db.transaction(() => {
          for (const id of s.families.id) fam.run(id, clientId, 'seed-user', 'user', now);
          s.access.hash.forEach((h, i) => at.run(h, s.access.jti[i], s.access.family[i], clientId, 'seed-user', 'user', now, expiresAt));
          s.refresh.hash.forEach((h, i) => rt.run(h, s.refresh.family[i], clientId, 'seed-user', 'user', now, expiresAt));
        })();
      }
      // Fold the write-ahead log back into the database, as the next checkpoint would: reads through a
      // WAL of hundreds of megabytes are slower than the steady state.
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
  try {
    for (let done = 0; done < tokens; done += CHUNK) {
      const s = slice(Math.min(CHUNK, tokens - done), issued(done));
      await c.query('BEGIN');
      await c.query(`INSERT INTO token_families (id, client_id, user_id, scope, created_at)
        SELECT id, $2, 'seed-user', 'user', $3 FROM unnest($1::text[]) AS t(id)`, [s.families.id, clientId, now]);
      await c.query(`INSERT INTO access_tokens (token_hash, jti, family_id, client_id, user_id, scope, created_at, expires_at)
        SELECT h, j, f, $4, 'seed-user', 'user', $5, $6 FROM unnest($1::text[], $2::text[], $3::text[]) AS t(h, j, f)`,
      [s.access.hash, s.access.jti, s.access.family, clientId, now, expiresAt]);
      await c.query(`INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, scope, created_at, expires_at)
        SELECT h, f, $3, 'seed-user', 'user', $4, $5 FROM unnest($1::text[], $2::text[]) AS t(h, f)`,
      [s.refresh.hash, s.refresh.family, clientId, now, expiresAt]);
      await c.query('COMMIT');
    }
    // Vacuumed and analysed now, as autovacuum would soon do on tables that grew this much: otherwise
    // it does so during the measurement and takes CPU and I/O from it.
    for (const t of ['token_families', 'access_tokens', 'refresh_tokens']) await c.query(`VACUUM (ANALYZE) ${t}`);
  } finally {
    await c.end();
  }
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

const SCENARIOS = ['cc', 'cc-opaque', 'introspect', 'introspect-opaque'];
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
      const gh: GatehouseUnderTest = await startGatehouse(db, { nodeFlags: opts.profileFlags, roles: 'auth', minimal: true, bin });
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
