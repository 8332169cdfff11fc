/**
 * `npm run docs:pictures`: the README's pictures, made again from the code so
 * they stay current.
 *
 * - docs/img/consent.png: Gatehouse started on a temporary SQLite database,
 *   a user and a client created, Chromium (Debian's, the browser tests'
 *   flags) signs in and stops at the consent page; fixed viewport, light
 *   scheme, fixed names, so the picture changes only when the page does.
 * - docs/img/benchmarks.svg: the benchmark figures saved in docs/benchmarks.md
 *   (the runs `npm run bench` wrote between its markers), their mean, each
 *   group on a linear axis with the targets drawn on it (bench/chart.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { linearChartSvg, runsFromMarkdown } from '../bench/chart.js';
import { meanRows } from '../bench/report.js';
import { loadConfig } from '../src/config.js';
import { createClient, createUser } from '../src/core/admin.js';
import { startGatehouse } from '../src/server.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const IMG = join(ROOT, 'docs/img');
const CHROMIUM = '/usr/bin/chromium';
/** The browser tests' flags (test/browser/chromium.ts): no sandbox as root in a container, nothing reaching the network. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

function benchmarkChart(): string {
  const { runs, measured } = runsFromMarkdown(readFileSync(join(ROOT, 'docs/benchmarks.md'), 'utf8'));
  const title = `Gatehouse vs node-oidc-provider vs the ceiling: ${runs.length > 1 ? `mean of ${runs.length} runs` : 'one run'}, ${measured} (docs/benchmarks.md)`;
  const path = join(IMG, 'benchmarks.svg');
  writeFileSync(path, linearChartSvg(meanRows(runs), title));
  return path;
}

async function consentScreenshot(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pictures-'));
  const running = await startGatehouse(loadConfig({
    GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}`,
    GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_LEVEL: 'silent',
  }));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const { gh } = running;
    await createUser(gh.storage, gh.hasher, gh.clock, { username: 'alice', email: 'alice@example.com', password: 'alice has a long password', name: 'Alice Liddell' });
    const { client } = await createClient(gh.storage, gh.clock, { name: 'Northwind Notes', redirectUris: ['https://notes.example.com/callback'], scope: 'openid profile email offline_access' });
    const context = await browser.newContext({ viewport: { width: 560, height: 820 }, deviceScaleFactor: 2, colorScheme: 'light', reducedMotion: 'reduce', locale: 'en-US' });
    const page = await context.newPage();
    const authorize = new URL('/oauth2', running.authUrl);
    authorize.search = new URLSearchParams({
      response_type: 'code', client_id: client.id, redirect_uri: 'https://notes.example.com/callback', scope: 'openid profile email offline_access',
      state: 'readme', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
    }).toString();
    await page.goto(authorize.toString());
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill('alice has a long password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    // No focus ring or caret in the picture.
    await page.evaluate('document.activeElement && document.activeElement.blur()');
    const path = join(IMG, 'consent.png');
    await page.screenshot({ path, fullPage: true, animations: 'disabled' });
    return path;
  } finally {
    await browser.close();
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

mkdirSync(IMG, { recursive: true });
console.log(`wrote ${benchmarkChart()}`);
console.log(`wrote ${await consentScreenshot()}`);
