/**
 * Screenshots of the sign-in, consent and error pages, light and dark, at a
 * desktop and a phone width, for a person to look at:
 *   node --import tsx test/browser/screenshots.ts [out-dir]   (default /tmp)
 */
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startServer } from '../helpers/server.js';
import { chromiumMissing, launchChromium, startCallback } from './chromium.js';

const out = process.argv[2] ?? '/tmp';
const missing = chromiumMissing();
if (missing) {
  console.error(missing);
  process.exit(1);
}

const server = await startServer();
const callback = await startCallback();
const browser = await launchChromium();
try {
  const user = await server.createUser('alice');
  const client = await server.createClient({ name: 'Acme Photo Printing', redirectUris: [callback.url], scope: 'user email chat offline_access' });
  const long = await server.createClient({
    name: 'Supercalifragilisticexpialidocious-Photo-Printing-And-Framing-Service-International',
    redirectUris: [callback.url], scope: 'user some-very-long-custom-permission-name-without-any-spaces',
  });
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  const authorize = `${server.url}/oauth2?${new URLSearchParams({
    response_type: 'code', client_id: client.id, redirect_uri: callback.url, scope: 'user chat offline_access',
    state: 'screenshots', code_challenge: challenge, code_challenge_method: 'S256',
  })}`;
  const written: string[] = [];

  for (const colorScheme of ['light', 'dark'] as const) {
    for (const [size, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]] as const) {
      const context = await browser.newContext({ colorScheme, viewport, deviceScaleFactor: size === 'phone' ? 2 : 1 });
      const page = await context.newPage();
      const shot = async (name: string) => {
        const path = join(out, `gatehouse-${name}-${colorScheme}-${size}.png`);
        await page.screenshot({ path, fullPage: true });
        written.push(path);
      };

      await page.goto(authorize);
      await shot('login');
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      await shot('login-error');
      await page.getByLabel('Password').fill(user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      await page.getByRole('button', { name: 'Allow' }).focus();
      await shot('consent');
      if (size === 'phone') {
        await page.goto(`${server.url}/oauth2?${new URLSearchParams({ response_type: 'code', client_id: long.id, redirect_uri: callback.url, state: 's' })}`);
        await shot('consent-long');
      }
      await page.goto(`${server.url}/oauth2?response_type=code&client_id=no-such-client`);
      await shot('error');
      await context.close();
    }
  }
  console.log(written.join('\n'));
} finally {
  await browser.close();
  await callback.close();
  await server.close();
}
