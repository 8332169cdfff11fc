#!/usr/bin/env node
// `npm run build`: the TypeScript in src/ compiled to dist/ (tsconfig.build.json), with the
// files the code reads at run time beside it (the chat page's static assets: every file in
// src/ that is not TypeScript), so `npm start` runs plain JavaScript, without tsx.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILT, ROOT } from './freshness.mjs';

const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else yield p;
  }
}

export function build() {
  const started = Date.now();
  // A stale stamp must not survive a failed build.
  rmSync(BUILT, { force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`tsc failed (status ${r.status}); dist/ was not updated`);
  for (const f of files(SRC)) {
    if (f.endsWith('.ts')) continue;
    const to = join(DIST, relative(SRC, f));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(f, to);
  }
  // Written last: its time is what `npm start` compares src/ against (scripts/freshness.mjs).
  writeFileSync(BUILT, `${new Date().toISOString()}\n`);
  return Date.now() - started;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ms = build();
  process.stderr.write(`built dist/ in ${(ms / 1000).toFixed(1)} s\n`);
}
