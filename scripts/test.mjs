#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's test runner (through tsx), two files at a time.
// Extra arguments narrow the run: `npm test -- test/oauth` or a file path.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(path, out = []) {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) collect(join(path, name), out);
  } else if (path.endsWith('.test.ts')) {
    out.push(path);
  }
  return out;
}

const roots = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const files = (roots.length ? roots : ['test']).flatMap((r) => collect(r));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const args = ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files];
const child = spawn(process.execPath, args, { stdio: 'inherit', env: { ...process.env, GATEHOUSE_LOG_LEVEL: process.env.GATEHOUSE_LOG_LEVEL ?? 'silent' } });
child.on('exit', (code, signal) => process.exit(signal ? 1 : code ?? 1));
