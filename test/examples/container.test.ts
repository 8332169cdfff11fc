/**
 * The container (issue 30 item 5): the Dockerfile's two stages and what the
 * runtime stage holds, that layout run for real without a container engine
 * (dist/ and production dependencies, no src/: started compiled, /readyz 200,
 * the image's HEALTHCHECK command passing against it), examples/compose (the
 * services, roles and HAProxy's configuration, checked with `haproxy -c`),
 * and, where podman runs and the node:20 base images are present locally,
 * the image built and run to /readyz 200 as a non-root user. Nothing is
 * pulled: a machine without the base images (no registry reachable) skips
 * that part and says why.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { track } from '../helpers/children.js';

const ROOT = join(import.meta.dirname, '../..');
const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const COMPOSE_DIR = join(ROOT, 'examples/compose');
const HAPROXY_CFG = readFileSync(join(COMPOSE_DIR, 'haproxy.cfg'), 'utf8');

/** The Dockerfile's instructions (continuation lines joined, comments dropped), each stage on its own. */
function stages(): { from: string; lines: string[] }[] {
  const lines = DOCKERFILE.replace(/\\\n\s*/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const out: { from: string; lines: string[] }[] = [];
  for (const l of lines) {
    if (l.startsWith('FROM ')) out.push({ from: l, lines: [] });
    else out.at(-1)?.lines.push(l);
  }
  return out;
}

/** The HEALTHCHECK's command (exec form), to run it as the engine would. */
function healthcheckCommand(): string[] {
  const m = /^HEALTHCHECK .*?CMD (\[.*\])$/m.exec(DOCKERFILE.replace(/\\\n\s*/g, ' '));
  assert.ok(m, 'a HEALTHCHECK in exec form');
  return JSON.parse(m[1]!) as string[];
}

async function waitFor(url: string, ms: number): Promise<Response> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return res;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > until) throw new Error(`${url} did not answer 200 within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const run = (cmd: string, args: string[], opts: { cwd?: string; timeout?: number; env?: NodeJS.ProcessEnv } = {}) =>
  spawnSync(cmd, args, { encoding: 'utf8', timeout: opts.timeout ?? 60_000, cwd: opts.cwd, env: opts.env ?? process.env });

describe('the Dockerfile', () => {
  it('two stages: npm ci and the build, then a slim runtime with dist/ and production dependencies only, as a non-root user', () => {
    const [build, runtime, ...more] = stages();
    assert.ok(build && runtime && more.length === 0, 'exactly two stages');
    assert.match(build.from, /^FROM \$\{NODE_IMAGE\} AS build$/);
    assert.match(DOCKERFILE, /^ARG NODE_IMAGE=node:20-bookworm$/m);
    assert.match(DOCKERFILE, /^ARG NODE_SLIM_IMAGE=node:20-bookworm-slim$/m);
    assert.match(runtime.from, /^FROM \$\{NODE_SLIM_IMAGE\} AS runtime$/);
    assert.ok(build.lines.some((l) => /^RUN npm ci\b/.test(l)));
    assert.ok(build.lines.some((l) => /^RUN npm run build && npm prune --omit=dev\b/.test(l)));
    // The runtime copies from the build stage only, and never the sources or the whole context.
    const copies = runtime.lines.filter((l) => l.startsWith('COPY '));
    assert.deepEqual(copies.map((l) => l.replace(/^COPY --from=build /, '').split(' ')), [
      ['/app/package.json', '/app/package-lock.json', './'], ['/app/node_modules', './node_modules'], ['/app/dist', './dist'],
      ['/app/bin', './bin'], ['/app/scripts/freshness.mjs', './scripts/freshness.mjs'],
    ]);
    assert.ok(runtime.lines.includes('USER node'), 'runs as the unprivileged node user');
    assert.ok(runtime.lines.includes('VOLUME ["/data"]'));
    const env = runtime.lines.find((l) => l.startsWith('ENV '))!;
    for (const v of ['NODE_ENV=production', 'GATEHOUSE_HOST=0.0.0.0', 'GATEHOUSE_DATABASE_URL=sqlite:/data/gatehouse.db']) assert.ok(env.includes(v), v);
    assert.ok(runtime.lines.some((l) => l.startsWith('HEALTHCHECK ') && l.includes('/healthz')));
    assert.ok(runtime.lines.includes('ENTRYPOINT ["node", "bin/gatehouse.mjs"]') && runtime.lines.includes('CMD ["serve"]'));
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['node_modules', 'dist', '.git', 'data', '*.db', 'secret.key']) assert.ok(ignored.includes(p), `.dockerignore: ${p}`);
  });

  it("the runtime stage's layout (no src/) starts compiled, serves /readyz 200, and its HEALTHCHECK passes", { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-image-'));
    const cleanup: (() => Promise<void>)[] = [async () => rmSync(dir, { recursive: true, force: true })];
    try {
      // The build stage: its inputs copied (the Dockerfile's COPY lines), the bundle built there, not in the shared dist/.
      const build = join(dir, 'build');
      mkdirSync(build);
      for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'bin', 'scripts', 'src']) cpSync(join(ROOT, f), join(build, f), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules'), join(build, 'node_modules'));
      const built = run(process.execPath, ['scripts/build.mjs'], { cwd: build, timeout: 180_000 });
      assert.equal(built.status, 0, built.stderr);
      // The runtime stage: only what it copies.
      const app = join(dir, 'app');
      mkdirSync(join(app, 'scripts'), { recursive: true });
      for (const f of ['package.json', 'package-lock.json', 'dist', 'bin']) cpSync(join(build, f), join(app, f), { recursive: true });
      cpSync(join(build, 'scripts/freshness.mjs'), join(app, 'scripts/freshness.mjs'));
      symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'));
      const data = join(dir, 'data');
      mkdirSync(data);
      const env = {
        ...process.env, NODE_ENV: 'production', GATEHOUSE_COMPILED: '1', GATEHOUSE_DATABASE_URL: `sqlite:${join(data, 'gatehouse.db')}`,
        GATEHOUSE_HOST: '127.0.0.1', GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_FORMAT: 'json', GATEHOUSE_LOG_LEVEL: 'info',
      };
      const child = track(spawn(process.execPath, ['bin/gatehouse.mjs', 'serve'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] }));
      const exited = new Promise((r) => child.once('exit', r));
      cleanup.unshift(async () => {
        if (child.exitCode === null) child.kill('SIGTERM');
        await exited;
      });
      let out = '';
      let err = '';
      child.stderr!.on('data', (d) => (err += d));
      const ready = await new Promise<{ auth_url: string }>((resolve, reject) => {
        child.stdout!.on('data', (d) => {
          out += d;
          const line = out.split('\n').find((l) => l.includes('Gatehouse ready'));
          if (line) resolve(JSON.parse(line) as { auth_url: string });
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}:\n${out}${err}`)));
      });
      assert.doesNotMatch(err, /building dist/, 'the bundle is taken as built: no src/ to build from');
      assert.equal((await waitFor(`${ready.auth_url}/readyz`, 20_000)).status, 200);
      // The key file and the database land in the data folder (the image's volume).
      assert.ok(existsSync(join(data, 'gatehouse.db')) && existsSync(join(data, 'secret.key')));
      const [cmd, ...args] = healthcheckCommand();
      assert.equal(cmd, 'node');
      const port = new URL(ready.auth_url).port;
      assert.equal(run(process.execPath, args, { env: { ...process.env, GATEHOUSE_AUTH_PORT: port } }).status, 0, 'HEALTHCHECK passes');
      assert.notEqual(run(process.execPath, args, { env: { ...process.env, GATEHOUSE_AUTH_PORT: '9' } }).status, 0, 'and fails with nothing listening');
    } finally {
      for (const c of cleanup) await c();
    }
  });
});

describe('examples/compose', () => {
  type Service = { image?: string; build?: { context: string }; command?: string[]; environment?: Record<string, string>; ports?: string[];
    depends_on?: Record<string, { condition: string }> | string[]; volumes?: string[]; secrets?: string[] };
  const compose = parseYaml(readFileSync(join(COMPOSE_DIR, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Service>; secrets: Record<string, { file: string }> };

  it('two Gatehouse processes (auth,api,bot), a worker, PostgreSQL, Redis, HAProxy, and a migrate step before them', () => {
    const s = compose.services;
    assert.deepEqual(Object.keys(s).sort(), ['gatehouse1', 'gatehouse2', 'haproxy', 'migrate', 'postgres', 'redis', 'worker']);
    for (const [name, roles] of [['gatehouse1', 'auth,api,bot'], ['gatehouse2', 'auth,api,bot'], ['worker', 'worker']] as const) {
      const env = s[name]!.environment!;
      assert.equal(env.GATEHOUSE_ROLES, roles, name);
      assert.match(env.GATEHOUSE_DATABASE_URL!, /^postgres:\/\/[^@]+@postgres:5432\//, name);
      assert.equal(env.GATEHOUSE_REDIS_URL, 'redis://redis:6379', name);
      assert.equal(env.GATEHOUSE_SECRET_KEY_FILE, '/run/secrets/gatehouse_secret_key', name);
      assert.equal(env.GATEHOUSE_MIGRATE, 'off', `${name} never migrates: the migrate service does`);
      assert.deepEqual((s[name]!.depends_on as Record<string, { condition: string }>).migrate, { condition: 'service_completed_successfully' });
      assert.ok(s[name]!.volumes!.includes('files:/data/files'), `${name} shares the bots' files`);
      assert.equal(s[name]!.build!.context, '../..');
    }
    assert.deepEqual(s.migrate!.command, ['migrate', '--json']);
    assert.equal(s.migrate!.environment!.GATEHOUSE_DATABASE_URL, s.gatehouse1!.environment!.GATEHOUSE_DATABASE_URL);
    assert.ok(existsSync(join(COMPOSE_DIR, s.gatehouse1!.build!.context, 'Dockerfile')));
    assert.deepEqual(s.haproxy!.ports, ['8080:8080', '8081:8081', '8082:8082']);
    assert.ok(s.haproxy!.volumes!.includes('./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro'));
    assert.deepEqual(compose.secrets.gatehouse_secret_key, { file: './secret.key' });
    for (const name of ['gatehouse1', 'gatehouse2']) assert.equal(s[name]!.ports, undefined, `${name} is reached through HAProxy only`);
  });

  it("haproxy.cfg balances each listener over both processes with docs/deployment.md's checks", () => {
    // White space as one space: the guide wraps its prose.
    const doc = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8').replace(/\s+/g, ' ');
    // The lines of the configuration the guide shows, present here too.
    for (const line of ['balance leastconn', 'option httpchk', 'http-check send meth GET uri /readyz', 'http-check expect status 200',
      'timeout server 65s', 'option redispatch', 'retry-on conn-failure empty-response']) {
      assert.ok(doc.includes(line), `docs/deployment.md shows ${line}`);
      assert.ok(HAPROXY_CFG.includes(line), `haproxy.cfg has ${line}`);
    }
    assert.match(HAPROXY_CFG, /default-server inter 500ms fall 2 rise 2 maxconn 1000/);
    for (const [backend, port] of [['auth', 8080], ['api', 8081], ['bot', 8082]] as const) {
      const section = HAPROXY_CFG.split(/\n(?=\S)/).find((s) => s.startsWith(`backend ${backend}\n`))!;
      for (const node of ['gatehouse1', 'gatehouse2']) {
        assert.match(section, new RegExp(`server ${node} ${node}:${port} check`));
        assert.match(section, new RegExp(`server ${node}-backup ${node}:${port} backup`));
      }
      assert.match(HAPROXY_CFG, new RegExp(`frontend ${backend}\\n    bind :${port}\\n    default_backend ${backend}`));
    }
  });

  const haproxy = run('haproxy', ['-v']).status === 0;
  it('haproxy -c accepts the configuration', { skip: !haproxy && 'haproxy not installed (apt-get install haproxy; .ci/run installs it)' }, () => {
    const r = run('haproxy', ['-c', '-f', join(COMPOSE_DIR, 'haproxy.cfg')]);
    assert.equal(r.status, 0, r.stderr + r.stdout);
  });
});

/**
 * podman's options for this machine, or why the image cannot be built and run here. Never pulls: the
 * base images must be present. Limits are set explicitly (podman's default open-files limit may be
 * above what a sandbox lets a process raise to), and the first OCI runtime that can start a
 * container from the base image is used (crun cannot on cgroup v1/v2 hybrids; runc can).
 */
function podmanSetup(): { skip: string } | { skip: false; global: string[]; limits: string[] } {
  const info = run('podman', ['info', '--format', '{{.Host.OCIRuntime.Name}}']);
  if (info.error || info.status !== 0) return { skip: `podman cannot run here (${info.error ? 'not installed: apt-get install podman' : info.stderr.trim().split('\n')[0]})` };
  const missing = ['node:20-bookworm', 'node:20-bookworm-slim'].filter((i) => run('podman', ['image', 'exists', i]).status !== 0);
  if (missing.length) {
    return { skip: `base image${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not present locally and never pulled by this test (no container registry is reachable from this machine)` };
  }
  const limits = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=4096:4096'];
  const errors: string[] = [];
  for (const global of [[], ['--runtime', 'runc']]) {
    const probe = run('podman', [...global, 'run', '--rm', '--pull=never', ...limits, 'node:20-bookworm-slim', 'node', '-e', '0']);
    if (probe.status === 0) return { skip: false, global, limits };
    errors.push(`${global.length ? 'runc' : info.stdout.trim()}: ${probe.stderr.trim().split('\n').at(-1)}`);
  }
  return { skip: `podman cannot start a container here (${errors.join('; ')})` };
}

// The suite's own timeout too: a fresh build (npm ci compiling native addons) takes minutes on two cores.
describe('the image, built and run with podman', { timeout: 1_500_000 }, () => {
  const setup = podmanSetup();
  const { skip } = setup;
  const podman = (args: string[], timeout?: number) => run('podman', [...(setup.skip === false ? setup.global : []), ...args], { timeout });
  const tag = `localhost/gatehouse-test:${randomBytes(4).toString('hex')}`;
  let container = '';
  after(() => {
    if (container) podman(['rm', '-f', container]);
    if (!skip) podman(['rmi', '-f', tag]);
  });

  it('builds, runs as a non-root user to /readyz 200, and reports healthy', { skip, timeout: 1_500_000 }, async () => {
    assert.ok(setup.skip === false);
    // The docker format keeps HEALTHCHECK (OCI images have no such field).
    const built = podman(['build', '--pull=never', '--format', 'docker', ...setup.limits, '-t', tag, ROOT], 1_400_000);
    assert.equal(built.status, 0, built.stdout.slice(-4000) + built.stderr.slice(-4000));
    const started = podman(['run', '-d', ...setup.limits, '-p', '127.0.0.1::8080', '-e', `GATEHOUSE_SECRET_KEY=${randomBytes(32).toString('base64')}`, tag]);
    assert.equal(started.status, 0, started.stderr);
    container = started.stdout.trim();
    const port = podman(['port', container, '8080/tcp']).stdout.trim().split(':').at(-1);
    const ready = await waitFor(`http://127.0.0.1:${port}/readyz`, 90_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${podman(['logs', container]).stderr}`);
    });
    assert.equal(ready.status, 200);
    assert.notEqual(podman(['exec', container, 'id', '-u']).stdout.trim(), '0', 'not root');
    assert.equal(podman(['healthcheck', 'run', container]).status, 0, 'HEALTHCHECK passes');
  });
});
