// Whether dist/ is the build of the src/ on disk: bin/gatehouse.mjs runs dist/ only when it is (and
// builds first otherwise), so a stale build never serves. Time stamps, not hashes: walking src/ is
// a few milliseconds, reading it all would not be.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The bundle (scripts/build.mjs): its entry main-<hash>.js and the chunks, of this build and recent ones. */
export const APP = join(ROOT, 'dist', 'app');
/** Written by scripts/build.mjs after a successful build: the file name of its entry in APP. */
export const BUILT = join(ROOT, 'dist', '.built');

/** The file URL of the last build's entry (to import). */
export function builtEntry() {
  return pathToFileURL(join(APP, readFileSync(BUILT, 'utf8').trim())).href;
}

/**
 * Besides src/: the bundle holds the dependencies too (an `npm install` that changed one touches
 * the lock files), and the build's own settings.
 */
const INPUT_FILES = ['package.json', 'package-lock.json', 'node_modules/.package-lock.json', 'tsconfig.json', 'scripts/build.mjs'];

function newest(dir) {
  let t = statSync(dir).mtimeMs;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

function mtime(file) {
  try {
    return statSync(join(ROOT, file)).mtimeMs;
  } catch {
    return 0;
  }
}

/** True when dist/ was built after every file in src/ (and the dependencies and build settings) last changed. */
export function distIsFresh() {
  let built;
  try {
    built = statSync(BUILT).mtimeMs;
    statSync(fileURLToPath(builtEntry()));
  } catch {
    return false;
  }
  // An install of the build alone (the container image: dist/ and production dependencies, no src/)
  // has nothing to be stale against, and nothing to build from.
  if (mtime('src') === 0) return true;
  return built > Math.max(newest(join(ROOT, 'src')), ...INPUT_FILES.map(mtime));
}
