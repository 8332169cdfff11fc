import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, parseForm } from '../helpers/agent.js';
import { track } from '../helpers/children.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ROOT = join(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The README's first section after the two opening commands, up to the next `## ` heading. */
function walkthrough(): string {
  const start = README.indexOf('\n## A first sign-in');
  assert.ok(start > 0, 'the README has a "A first sign-in" section');
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end);
}

const blocks = (section: string) => [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** Every variable a block assigns at the start of a line: what the next block may use. */
const assigned = (all: string[]) => [...new Set(all.flatMap((b) => [...b.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]!)))];

function decode(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

describe('README: the first sign-in, pasted block by block into bash', { timeout: 180_000 }, () => {
  let server: TestServer;
  let dir: string;
  let state: string;
  const section = walkthrough();
  const steps = blocks(section);
  const names = assigned(steps);

  before(async () => {
    // A database file, so the README's `npx gatehouse` commands and the server share it.
    dir = mkdtempSync(join(tmpdir(), 'gh-readme-'));
    server = await startServer({ env: { GATEHOUSE_ROLES: 'auth,api', GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}` } });
    state = join(dir, 'state.sh');
    writeFileSync(state, '');
  });
  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** One block in a fresh bash that first takes the variables earlier blocks set, as one terminal would keep them. */
  function run(block: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    // -e and pipefail: a command that fails fails the block (the README's blocks run cleanly under them).
    const script = `source "$README_STATE"\nset -e -o pipefail\n${block}\nset +e\ndeclare -p ${names.join(' ')} 2>/dev/null > "$README_STATE"\nexit 0\n`;
    return new Promise((resolve) => {
      const child = track(spawn('bash', ['-c', script], {
        cwd: ROOT,
        env: { ...process.env, README_STATE: state, GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}`, GATEHOUSE_LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }));
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  async function step(i: number, block = steps[i]!) {
    const r = await run(block);
    assert.equal(r.code, 0, `block ${i} failed:\n${block}\n${r.stderr}`);
    return r.stdout;
  }

  it('has the blocks this test walks through, and says how long a code lives', () => {
    assert.equal(steps.length, 7, 'seven shell blocks');
    assert.match(section, /only\s+for 60 seconds/);
    assert.equal(server.gh.oauth.codeTtl, 60, 'the README states the default code lifetime');
    // Distinct names per client, nothing left to set by hand.
    assert.match(steps[2]!, /--name "My app"/);
    assert.match(steps[3]!, /--name "Batch job"/);
    assert.doesNotMatch(section, /\$CLIENT_ID|\$CLIENT_SECRET/);
  });

  let authorizeUrl = '';
  let pageLines: string[] = [];

  it('runs every block against a started server and gets what the README says', async () => {
    // The first block names the servers; here they listen on ports of their own.
    const setup = steps[0]!;
    assert.match(setup, /^AUTH=http:\/\/127\.0\.0\.1:8080 /m);
    assert.match(setup, /^API=http:\/\/127\.0\.0\.1:8081 /m);
    await step(0, setup.replace(/^AUTH=\S+/m, `AUTH=${server.authUrl}`).replace(/^API=\S+/m, `API=${server.apiUrl}`));

    assert.match(await step(1), /alice/);

    const app = await step(2);
    assert.match(app, /^My app: \S+\n$/);
    const vars = readFileSync(state, 'utf8');
    assert.match(vars, /APP_SECRET="[^"]{16,}"/, 'the secret was captured');

    const job = JSON.parse(await step(3)) as Record<string, unknown>;
    assert.equal(job.token_type, 'Bearer', JSON.stringify(job));
    assert.equal(typeof job.access_token, 'string');

    authorizeUrl = (await step(4)).trim();
    assert.ok(authorizeUrl.startsWith(`${server.authUrl}/oauth2?`), authorizeUrl);
  });

  it('the browser step: login, consent, and a landing page that shows the next two lines', async () => {
    assert.ok(authorizeUrl, 'the previous case printed the URL');
    const agent = new Agent(server.authUrl);
    const first = await agent.get(authorizeUrl);
    assert.equal(first.status, 302);
    const toLogin = new URL(first.headers.get('location')!, server.authUrl);
    assert.equal(toLogin.pathname, '/login');
    const signedIn = await agent.login('alice', 'correct horse battery staple', toLogin.searchParams.get('return_to')!);
    assert.equal(signedIn.status, 303);
    const consent = await agent.get(signedIn.headers.get('location')!);
    assert.equal(consent.status, 200);
    const html = await consent.text();
    assert.match(html, /My app/);
    const form = parseForm(html);
    const decided = await agent.post(form.action, { ...form.fields, approve: 'true' });
    assert.equal(decided.status, 303);
    const landing = new URL(decided.headers.get('location')!);
    assert.equal(`${landing.origin}${landing.pathname}`, `${server.authUrl}/demo/callback`);
    assert.equal(landing.searchParams.get('state'), 'xyz');

    const page = await agent.get(landing.pathname + landing.search);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    const body = await page.text();
    assert.match(body, /60 seconds/);
    const command = /<pre class="command" id="next-command"[^>]*>([\s\S]*?)<\/pre>/.exec(body);
    assert.ok(command, 'the page shows the next command');
    pageLines = decode(command[1]!).split('\n');
    assert.equal(pageLines[0], `CODE='${landing.searchParams.get('code')}'`);
  });

  it('the lines the page shows are the README\'s, and they exchange the code; the token reads /user', async () => {
    const readmeLines = steps[5]!.trimEnd().split('\n');
    assert.match(readmeLines[0]!, /^CODE=/);
    assert.deepEqual(pageLines.slice(1), readmeLines.slice(1), 'the README prints what the page prints');
    const tokens = JSON.parse(await step(5, `${pageLines.join('\n')}\n`)) as Record<string, unknown>;
    assert.equal(tokens.token_type, 'Bearer');
    const user = JSON.parse(await step(6)) as Record<string, unknown>;
    assert.equal(user.username, 'alice');
    assert.equal(user.email, 'alice@example.com');
  });

  it('the landing page puts only a code-shaped value into a command, and shows a refusal plainly', async () => {
    for (const bad of ["x'; rm -rf ~; '", 'short', 'a'.repeat(600), '$(id)']) {
      const r = await fetch(`${server.authUrl}/demo/callback?code=${encodeURIComponent(bad)}&state=xyz`);
      assert.equal(r.status, 400, bad);
      const text = await r.text();
      assert.doesNotMatch(text, /next-command|CODE=/, bad);
    }
    const twice = await fetch(`${server.authUrl}/demo/callback?code=abcdefghij&code=klmnopqrst`);
    assert.equal(twice.status, 400);
    const denied = await fetch(`${server.authUrl}/demo/callback?error=access_denied&state=xyz`);
    assert.equal(denied.status, 200);
    assert.match(await denied.text(), /access_denied/);
  });

  it('npm run example and example:sso listen beside npm start (8080-8082)', () => {
    for (const file of ['examples/website/start.ts', 'examples/sso/start.ts']) {
      const src = readFileSync(join(ROOT, file), 'utf8');
      const port = /GATEHOUSE_AUTH_PORT: '(\d+)'/.exec(src)?.[1];
      assert.ok(port && !['8080', '8081', '8082'].includes(port), `${file} sets its own auth port`);
      assert.ok(src.indexOf('GATEHOUSE_AUTH_PORT') < src.indexOf('...process.env'), `${file}: the environment still overrides it`);
    }
  });
});
