/**
 * `node --import tsx bench/startup.ts [--runs N]`: cold start to ready and
 * idle resident memory of `gatehouse serve` run through tsx, run compiled
 * (dist/, `npm start`), with GATEHOUSE_WORKERS=auto, and of a bare
 * node:http server, in one run on this machine. Ready: the process printed
 * its ready line (Gatehouse: "Gatehouse ready", after migrations, keys and
 * all three listeners). Each start is on a database already migrated (a
 * restart, not a first install). RSS: VmRSS two seconds after ready, summed
 * over the process and its children (the workers).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/gatehouse.mjs', import.meta.url));
const BARE = `require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log('ready ' + this.address().port); });`;

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);

function rssKb(pid: number): number {
  let kb = 0;
  try {
    kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) kb += rssKb(Number(child));
  } catch {
    // Gone meanwhile.
  }
  return kb;
}

async function once(args: string[], env: Record<string, string>, ready: (line: string) => boolean): Promise<{ ms: number; rssMb: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const ms = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.split('\n').some(ready)) resolve(performance.now() - t0);
      });
      child.on('exit', (code) => reject(new Error(`exited ${code} before ready:\n${out.slice(-2000)}`)));
    });
    await new Promise((r) => setTimeout(r, 2000));
    return { ms, rssMb: rssKb(child.pid!) / 1024 };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'gh-startup-'));
const serve = (extra: Record<string, string>) => ({
  GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'g.db')}`, GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_FORMAT: 'json', ...extra,
});
const gatehouseReady = (l: string) => l.includes('"Gatehouse ready');
const variants: [string, string[], Record<string, string>, (l: string) => boolean][] = [
  ['bare node:http', ['-e', BARE], {}, (l) => l.startsWith('ready ')],
  ['gatehouse, tsx', [BIN, 'serve'], serve({ GATEHOUSE_COMPILED: '0' }), gatehouseReady],
  ['gatehouse, compiled (npm start)', [BIN, 'serve'], serve({ GATEHOUSE_COMPILED: '1' }), gatehouseReady],
  ['gatehouse, compiled, GATEHOUSE_WORKERS=auto', [BIN, 'serve'], serve({ GATEHOUSE_COMPILED: '1', GATEHOUSE_WORKERS: 'auto' }), gatehouseReady],
];
try {
  // Migrated once (and dist/ built when stale) before anything is timed.
  await once([BIN, 'serve'], serve({ GATEHOUSE_COMPILED: '1' }), gatehouseReady);
  const rows: string[] = [];
  let bare: { ms: number; rssMb: number } | undefined;
  for (const [name, args, env, ready] of variants) {
    const got: { ms: number; rssMb: number }[] = [];
    for (let i = 0; i < runs; i++) got.push(await once(args, env, ready));
    const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const m = { ms: med(got.map((g) => g.ms)), rssMb: med(got.map((g) => g.rssMb)) };
    bare ??= m;
    rows.push(`| ${name} | ${m.ms.toFixed(0)} ms | ${(m.ms / bare.ms).toFixed(1)}× | ${m.rssMb.toFixed(0)} MB | ${(m.rssMb / bare.rssMb).toFixed(1)}× |`);
  }
  console.log(`start to ready and idle RSS, median of ${runs} starts each\n\n| server | start to ready | vs bare | idle RSS | vs bare |\n|---|---|---|---|---|\n${rows.join('\n')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
