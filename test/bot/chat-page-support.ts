import type { Browser, BrowserContextOptions, Page } from 'playwright-core';

/**
 * The chat page in Chromium, for test/bot/chat-page*.test.ts: what counts as a
 * problem on the page, signing in, and writing a line.
 */

/** A bot token as BotFather's answer shows it (`<id>:<35 characters>`). */
export const BOT_TOKEN = /(?<![0-9])(\d+:[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])/;

/** A new page in a context of its own (15 s waits), its problems collected into `problems`. */
export async function newChatPage(browser: Browser, problems: string[], options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  collectProblems(page, problems);
  return page;
}

/** CSP violations and script errors land on the console; a missing favicon is no problem. */
export function collectProblems(page: Page, problems: string[]): void {
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text()); });
  page.on('response', (r) => { if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`); });
  page.on('pageerror', (e) => problems.push(e.message));
}

/** Signs in from the chat page through Gatehouse's login page; back on the chat page with BotFather listed. */
export async function signInToChat(page: Page, botUrl: string, username: string, password: string): Promise<void> {
  await page.goto(`${botUrl}/`);
  await page.click('#signin');
  await page.waitForURL((u) => u.pathname === '/login');
  await page.fill('#username', username);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  // Back on the chat page, signed in: no consent page for the first-party client.
  await page.waitForURL((u) => u.origin === botUrl && u.pathname === '/' && !u.search);
  await page.locator('#chats button[data-bot="BotFather"]').waitFor();
}

/** Sends a line in the open chat and waits for the bot's next answer to appear. */
export async function say(page: Page, text: string): Promise<string> {
  const before = await page.locator('#messages li.theirs').count();
  await page.fill('#text', text);
  await page.press('#text', 'Enter');
  await page.locator('#messages li.theirs').nth(before).waitFor();
  return page.locator('#messages li.theirs').nth(before).locator('.text').innerText();
}
