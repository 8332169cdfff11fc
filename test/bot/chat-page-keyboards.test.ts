import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Bot, InlineKeyboard, Keyboard } from 'grammy';
import type { Browser, Page } from 'playwright-core';
import { BOT_TOKEN as TOKEN, newChatPage, say, signInToChat } from './chat-page-support.js';
import { chromiumMissing, launchChromium } from '../browser/chromium.js';
import { startBotServer, type BotTestServer } from './support.js';

/**
 * The chat page with an unmodified grammY bot (long polling): inline buttons
 * under a message, the bot's answer as a toast and as an alert, a URL button,
 * a reply keyboard above the input (one-time, then removed), an edit and a
 * deletion shown live, and the bot's commands offered after a slash. Skipped
 * without /usr/bin/chromium, except in CI.
 */
describe('chat page keyboards in Chromium', { skip: chromiumMissing(), timeout: 120_000 }, () => {
  let server: BotTestServer;
  let browser: Browser;
  let page: Page;
  let bot: Bot | undefined;
  const problems: string[] = [];

  before(async () => {
    server = await startBotServer();
    await server.createUser('hana', 'hana has a long password');
    browser = await launchChromium();
    page = await newChatPage(browser, problems);
  });
  after(async () => {
    await bot?.stop();
    await browser?.close();
    await server?.close();
  });

  it('presses inline buttons and reply keys; edits, deletions and commands show live', async () => {
    await signInToChat(page, server.botUrl, 'hana', 'hana has a long password');

    // BotFather's own reply keyboard: /setcommands offers the bot's @username as a key.
    await say(page, '/newbot');
    await say(page, 'Keys');
    const token = TOKEN.exec(await say(page, 'hana_keys_bot'))?.[1];
    assert.ok(token);
    assert.match(await say(page, '/setcommands'), /Choose a bot/);
    const key = page.locator('#reply-keyboard button', { hasText: '@hana_keys_bot' });
    await key.click();
    await page.locator('#messages li.theirs', { hasText: 'Send me a list of commands' }).waitFor();
    assert.equal(await page.locator('#reply-keyboard').isHidden(), true, 'one-time keyboard hidden after the press');
    assert.match(await say(page, 'menu - Show the menu\nhelp - Get help'), /Success! Command list updated/);

    const b = new Bot(token, { client: { apiRoot: server.botUrl } });
    bot = b;
    b.command('menu', (ctx) => ctx.reply('Pick one', {
      reply_markup: new InlineKeyboard().text('Toast', 'toast').text('Alert', 'alert').row().url('Docs', 'https://example.org/docs'),
    }));
    b.command('help', (ctx) => ctx.reply('Which colour?', { reply_markup: new Keyboard().text('Red').text('Blue').oneTime().resized() }));
    b.hears('Red', (ctx) => ctx.reply('Red it is', { reply_markup: { remove_keyboard: true } }));
    b.callbackQuery('toast', async (ctx) => {
      await ctx.answerCallbackQuery({ text: 'Toasted!' });
      await ctx.editMessageText('Picked: toast', { reply_markup: new InlineKeyboard().text('Alert', 'alert').text('Delete', 'delete') });
    });
    b.callbackQuery('alert', (ctx) => ctx.answerCallbackQuery({ text: 'Careful now', show_alert: true }));
    b.callbackQuery('delete', async (ctx) => {
      await ctx.answerCallbackQuery();
      await ctx.deleteMessage();
    });
    await new Promise<void>((resolve) => void b.start({ onStart: () => resolve() }));

    await page.fill('#new-chat-name', '@hana_keys_bot');
    await page.press('#new-chat-name', 'Enter');
    // Typing a slash offers the commands set with BotFather; a click sends one.
    await page.fill('#text', '/');
    await page.locator('#command-list button[data-command="menu"]').waitFor();
    assert.equal(await page.locator('#command-list button').count(), 2);
    await page.fill('#text', '/he');
    await page.locator('#command-list button[data-command="menu"]').waitFor({ state: 'detached' });
    await page.fill('#text', '/m');
    await page.click('#command-list button[data-command="menu"]');

    const menu = page.locator('#messages li.theirs', { hasText: 'Pick one' });
    await menu.waitFor();
    const docs = menu.locator('a.kb-button', { hasText: 'Docs' });
    assert.equal(await docs.getAttribute('href'), 'https://example.org/docs');
    assert.match((await docs.getAttribute('rel')) ?? '', /noopener/);
    assert.equal(await docs.getAttribute('target'), '_blank');

    // A press: the bot answers with a toast, then edits the message (shown live, new buttons).
    await menu.locator('button.kb-button', { hasText: 'Toast' }).click();
    await page.locator('#toast', { hasText: 'Toasted!' }).waitFor();
    const edited = page.locator('#messages li.theirs', { hasText: 'Picked: toast' });
    await edited.waitFor();
    assert.equal(await page.locator('#messages li.theirs', { hasText: 'Pick one' }).count(), 0);
    assert.match(await edited.locator('time').innerText(), /edited/);

    // show_alert: a dialog the person closes.
    await edited.locator('button.kb-button', { hasText: 'Alert' }).click();
    await page.locator('#alert[open]').waitFor();
    assert.equal(await page.locator('#alert-text').innerText(), 'Careful now');
    await page.click('#alert-ok');
    await page.locator('#alert[open]').waitFor({ state: 'detached' });

    // A deletion removes the message from the open page.
    await edited.locator('button.kb-button', { hasText: 'Delete' }).click();
    await edited.waitFor({ state: 'detached' });

    // A reply keyboard above the input: a key sends its text; remove_keyboard removes it.
    await page.fill('#text', '/help');
    await page.press('#text', 'Enter');
    await page.locator('#reply-keyboard button', { hasText: 'Blue' }).waitFor();
    await page.locator('#reply-keyboard button', { hasText: 'Red' }).click();
    await page.locator('#messages li.mine', { hasText: 'Red' }).waitFor();
    await page.locator('#messages li.theirs', { hasText: 'Red it is' }).waitFor();
    assert.equal(await page.locator('#reply-keyboard').isHidden(), true);
    assert.equal(await page.locator('#reply-keyboard button').count(), 0, 'remove_keyboard removed the keys');
    assert.deepEqual(problems, []);
  });
});
