#!/usr/bin/env node
// Two ways to run, one rule: compiled JavaScript (dist/) only when asked for and only when it is
// the build of the src/ on disk; otherwise the TypeScript sources directly through tsx.
//  - compiled: `npm start`, NODE_ENV=production or GATEHOUSE_COMPILED=1. dist/ missing or older
//    than any file in src/ is built first (scripts/build.mjs), so a stale build never serves.
//  - tsx: everything else (development, the tests, `npx gatehouse …` in a checkout).
//    GATEHOUSE_COMPILED=0 forces it.
const flag = process.env.GATEHOUSE_COMPILED;
const compiled = flag === '1' || (flag !== '0' && (process.env.NODE_ENV === 'production' || process.env.npm_lifecycle_event === 'start'));

let main;
if (compiled) {
  const { distIsFresh } = await import('../scripts/freshness.mjs');
  if (!distIsFresh()) {
    const cluster = await import('node:cluster');
    // A worker of GATEHOUSE_WORKERS finds the build its primary just made; only a primary builds.
    if (cluster.default.isWorker) throw new Error('dist/ is older than src/: run `npm run build`');
    process.stderr.write('gatehouse: building dist/ (missing or older than src/)…\n');
    const { build } = await import('../scripts/build.mjs');
    build();
  }
  ({ main } = await import('../dist/cli/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
const code = await main(process.argv.slice(2));
if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
