#!/usr/bin/env node
// Two ways to run, one rule: compiled JavaScript (the bundle in dist/app/) only when asked for and
// only when it is the build of the src/ on disk; otherwise the TypeScript sources directly through tsx.
//  - compiled: `npm start`, NODE_ENV=production or GATEHOUSE_COMPILED=1. A bundle missing or older
//    than any file in src/ (or the dependencies) is built first (scripts/build.mjs), so a stale
//    build never serves.
//  - tsx: everything else (development, the tests, `npx gatehouse …` in a checkout).
//    GATEHOUSE_COMPILED=0 forces it.
const flag = process.env.GATEHOUSE_COMPILED;
const compiled = flag === '1' || (flag !== '0' && (process.env.NODE_ENV === 'production' || process.env.npm_lifecycle_event === 'start'));
/** Set by a primary for its workers (GATEHOUSE_WORKERS): the entry of the build it runs. */
const PINNED = 'GATEHOUSE_BUILD_ENTRY';

let main;
if (compiled) {
  const cluster = (await import('node:cluster')).default;
  let entry = cluster.isWorker ? process.env[PINNED] : undefined;
  if (!entry) {
    const { distIsFresh, builtEntry } = await import('../scripts/freshness.mjs');
    if (!distIsFresh()) {
      // A worker runs its primary's build (pinned above); only a primary builds.
      if (cluster.isWorker) throw new Error('dist/ is older than src/: run `npm run build`');
      process.stderr.write('gatehouse: building dist/ (missing or older than src/)…\n');
      const { build } = await import('../scripts/build.mjs');
      await build();
    }
    // Workers forked now or restarted later run this same build, even if dist/ is rebuilt meanwhile.
    entry = process.env[PINNED] = builtEntry();
  }
  ({ main } = await import(entry));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
const code = await main(process.argv.slice(2));
if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
