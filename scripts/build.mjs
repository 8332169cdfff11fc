#!/usr/bin/env node
// `npm run build`: src/ bundled by esbuild into dist/app/ (ESM, split at every dynamic import:
// what src loads lazily stays out of the start), with the files the code reads at run time beside
// it (every file in src/ that is not TypeScript), so `npm start` runs plain JavaScript, without
// tsx, and loads a few files instead of the ~1000 modules of src/ and its dependencies.
// No type check here: that is `npm run typecheck`.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { APP, BUILT, ROOT } from './freshness.mjs';

const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');
/** Old chunks are kept this long: a server started before a rebuild may still import one lazily. */
const KEEP_OLD_CHUNKS_MS = 7 * 24 * 3600 * 1000;

/**
 * Left to Node at run time, not bundled: native addons (a .node file found beside their own
 * JavaScript), and what src only ever imports lazily for a setting or a rare request, so it is
 * loaded as before (from node_modules, when asked) and the bundle stays small.
 */
const EXTERNAL = [
  'better-sqlite3', '@node-rs/argon2',
  'pg', 'ioredis', '@opentelemetry/*', '@simplewebauthn/server', 'qrcode', 'prom-client',
  // Fastify's JSON-schema compilers: required only if a route asks for one (src/http/input.ts).
  '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler',
];

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else yield p;
  }
}

/**
 * The modules of src/ as esbuild loads them, with two rewrites:
 *  - import.meta.url: a module that reads a file next to itself (new URL('./static/…',
 *    import.meta.url)) finds it where tsc would have put that module: in src/a/b.ts it is
 *    dist/a/b.js, whichever chunk of dist/app/ the module ended up in (all are in that folder).
 *  - `import { z } from 'zod'` becomes `import * as z from 'zod'`: the same bindings, but esbuild
 *    keeps every export of a namespace object imported by name, zod's 40 locales too (360 KB of
 *    a start); of `import * as`, only what is used.
 */
const srcRewrites = {
  name: 'src-rewrites',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (!args.path.startsWith(SRC + sep)) return undefined;
      let text = readFileSync(args.path, 'utf8');
      const asBuilt = `../${relative(SRC, args.path).split(sep).join('/').replace(/\.ts$/, '.js')}`;
      text = text.replaceAll('import.meta.url', `new URL(${JSON.stringify(asBuilt)}, import.meta.url).href`);
      text = text.replaceAll("import { z } from 'zod';", "import * as z from 'zod';");
      return { contents: text, loader: 'ts' };
    });
  },
};

/**
 * A dependency's own import() is left to Node, from the file it resolves to: esbuild would make
 * a chunk of a CommonJS module that offers only its default export (@fastify/cookie imports the
 * cookie package so, and calls its named exports).
 */
const dependenciesImportNatively = {
  name: 'dependencies-import-natively',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData?.natively || !/[\\/]node_modules[\\/]/.test(args.importer)) return undefined;
      const r = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: { natively: true } });
      if (r.errors.length > 0 || r.external) return undefined;
      return { path: relative(APP, r.path).split(sep).join('/'), external: true };
    });
  },
};

/** Files of dist/app/ neither written by this build nor recent (see KEEP_OLD_CHUNKS_MS). */
function pruneOldChunks(written) {
  const now = Date.now();
  for (const e of readdirSync(APP)) {
    const p = join(APP, e);
    if (!written.has(p) && now - statSync(p).mtimeMs > KEEP_OLD_CHUNKS_MS) rmSync(p, { force: true });
  }
}

export async function build() {
  const started = Date.now();
  // A stale stamp must not survive a failed build.
  rmSync(BUILT, { force: true });
  // Everything but the chunks: tsc's output of earlier versions, the copied assets (copied again below).
  mkdirSync(DIST, { recursive: true });
  for (const e of readdirSync(DIST)) if (e !== 'app') rmSync(join(DIST, e), { recursive: true, force: true });
  const esbuild = await import('esbuild');
  let result;
  try {
    result = await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: { main: join(SRC, 'cli/main.ts') },
      outdir: APP,
      // The entry's name changes with its content, so a build never overwrites what a running server
      // (or a worker its primary pins, bin/gatehouse.mjs) still loads.
      entryNames: '[name]-[hash]',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      external: EXTERNAL,
      // Some bundled dependencies are CommonJS and call require() for Node's own modules.
      banner: { js: "import { createRequire as __ghCreateRequire } from 'node:module'; const require = __ghCreateRequire(import.meta.url);" },
      // A map file beside each chunk: stack traces in src/ terms with `node --enable-source-maps` (docs/operations.md, Development).
      sourcemap: 'linked',
      sourcesContent: false,
      // Class and function names as in src/ (error names, logs).
      keepNames: true,
      metafile: true,
      logLevel: 'warning',
      plugins: [srcRewrites, dependenciesImportNatively],
    });
  } finally {
    // esbuild's service process would otherwise live on beside the server this build is for.
    await esbuild.stop();
  }
  for (const f of files(SRC)) {
    if (f.endsWith('.ts')) continue;
    const to = join(DIST, relative(SRC, f));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(f, to);
  }
  // What each chunk holds and imports (https://esbuild.github.io/analyze/ reads it).
  writeFileSync(join(DIST, 'meta.json'), JSON.stringify(result.metafile));
  const outputs = Object.entries(result.metafile.outputs);
  pruneOldChunks(new Set(outputs.map(([o]) => join(ROOT, o))));
  const entry = outputs.find(([, o]) => o.entryPoint === relative(ROOT, join(SRC, 'cli/main.ts')).split(sep).join('/'))[0];
  // Written last: its time is what `npm start` compares src/ against (scripts/freshness.mjs).
  writeFileSync(BUILT, `${basename(entry)}\n`);
  return Date.now() - started;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ms = await build();
  process.stderr.write(`built dist/ in ${(ms / 1000).toFixed(1)} s\n`);
}
