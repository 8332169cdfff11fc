// Whether dist/ is the compiled form of the src/ on disk: bin/gatehouse.mjs runs dist/ only when
// it is (and builds first otherwise), so a stale build never serves. Time stamps, not hashes:
// walking src/ is a few milliseconds, reading it all would not be.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Written by scripts/build.mjs after a successful build. */
export const BUILT = join(ROOT, 'dist', '.built');

function newest(dir) {
  let t = statSync(dir).mtimeMs;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** True when dist/ was built after every file in src/ (and the build settings) last changed. */
export function distIsFresh() {
  let built;
  try {
    built = statSync(BUILT).mtimeMs;
  } catch {
    return false;
  }
  const inputs = Math.max(newest(join(ROOT, 'src')), statSync(join(ROOT, 'tsconfig.json')).mtimeMs, statSync(join(ROOT, 'tsconfig.build.json')).mtimeMs);
  return built > inputs;
}
