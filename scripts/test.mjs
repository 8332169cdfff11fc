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
// A test that hangs fails after --test-timeout (tests that need longer say so); --test-force-exit ends a
// file's process once its tests are done even if something (a child a failed test never stopped) holds
// its event loop; and the whole run has a deadline, so CI reports a hang instead of running into its own limit.
const deadlineMin = Number(process.env.GATEHOUSE_TEST_DEADLINE_MIN ?? 40);
const args = ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', '--test-force-exit', '--test-timeout=300000', ...files];
// Its own process group, so the deadline and Ctrl+C take the test files' processes and what they started.
const child = spawn(process.execPath, args, { stdio: 'inherit', detached: true, env: { ...process.env, GATEHOUSE_LOG_LEVEL: process.env.GATEHOUSE_LOG_LEVEL ?? 'silent' } });
const killGroup = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
};
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => killGroup(signal));
const deadline = setTimeout(() => {
  console.error(`\nThe tests did not finish within ${deadlineMin} minutes (GATEHOUSE_TEST_DEADLINE_MIN); stopping them.`);
  killGroup('SIGKILL');
}, deadlineMin * 60_000);
child.on('exit', (code, signal) => {
  clearTimeout(deadline);
  process.exit(signal ? 1 : code ?? 1);
});
