/**
 * Uploads cannot fill the disk (issue 24, finding 6): a multipart body is
 * admitted (token, throttle, method) before a byte of it is written; every
 * way a request fails removes what it staged (a connection lost mid-file, a
 * body without its closing boundary, a method that refuses after parsing);
 * a sweep at start and on a timer removes staging leftovers and kept bytes
 * no file row names; and GATEHOUSE_BOT_FILE_QUOTA bounds what one bot
 * stores, atomically across parallel uploads and two servers on one database.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { startGatehouse } from '../../src/server.js';
import { databaseKinds } from '../helpers/db.js';
import { multipart } from './files-support.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

const QUOTA = 100_000;
const BOUNDARY = 'gatehouse-test-boundary';

const staging = (dir: string) => readdirSync(join(dir, 'staging'));
const kept = (dir: string) => readdirSync(dir).filter((n) => /^[0-9a-f]{2}$/.test(n)).flatMap((n) => readdirSync(join(dir, n)).map((f) => join(dir, n, f)));

/** The start of a multipart body: a chat_id field, then a file part's header; the file's bytes follow. */
function head(chatId: number, part = 'document'): Buffer {
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="chat_id"\r\n\r\n${chatId}\r\n`
    + `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part}"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
}

/** A raw HTTP request whose body we write ourselves (and may cut short); `answer` resolves with what came back once the socket closes. */
function rawRequest(url: string, path: string, length: number): { socket: Socket; received: () => string; answer: Promise<string> } {
  const u = new URL(url);
  const socket = connect(Number(u.port), u.hostname);
  socket.write(`POST ${path} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n\r\n`);
  let got = '';
  socket.on('data', (d) => {
    got += d.toString('latin1');
  });
  socket.on('error', () => undefined);
  const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(got)));
  return { socket, received: () => got, answer };
}

async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const { kind, skip } of await databaseKinds()) {
  describe(`uploads and the disk (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let dir: string;
    let token: string;
    let chatId: number;
    let chat: ChatApi;
    let quotaFileId = '';
    const env = () => ({ GATEHOUSE_FILES_DIR: dir, GATEHOUSE_BOT_FILE_QUOTA: String(QUOTA), GATEHOUSE_BOT_FLOOD_CHAT_RATE: '0', GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: '0' });
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gh-uploads-'));
      server = await startBotServer({ db: kind, env: env() });
      chat = new ChatApi(server.botUrl, await signedInPerson(server, 'ulla'));
      token = await botViaBotFather(chat, 'Uploader', 'uploader_bot');
      await chat.send('uploader_bot', 'hi');
      const updates = await botApi(server.botUrl, token, 'getUpdates', {});
      chatId = (updates.body.result as { message: { chat: { id: number } } }[])[0]!.message.chat.id;
    });
    after(async () => {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('a wrong token, an unknown method or a method without files: answered before the body, nothing written', async () => {
      const botId = token.split(':')[0]!;
      const cases: [string, number][] = [
        [`/bot${botId}:${'x'.repeat(35)}/sendDocument`, 401],
        ['/botgarbage/sendDocument', 401],
        [`/bot${token}/sendNothing`, 404],
      ];
      for (const [path, status] of cases) {
        const body = Buffer.concat([head(chatId), Buffer.alloc(4 * 1024 * 1024, 1)]);
        const { socket, received, answer } = rawRequest(server.botUrl, path, body.length + 100);
        // The body, slowly: the answer comes before it is all sent, and nothing reaches the staging folder meanwhile.
        let sent = 0;
        for (let i = 0; i < 120 && !received(); i++) {
          socket.write(body.subarray(sent, sent + 32 * 1024));
          sent += 32 * 1024;
          assert.deepEqual(staging(dir), [], `${path}: nothing staged`);
          await sleep(20);
        }
        assert.ok(received(), `${path}: answered while the body was still coming (${sent} of ${body.length} bytes sent)`);
        socket.end();
        const text = await answer;
        assert.match(text, new RegExp(`^HTTP/1.1 ${status} `), `${path}: ${text.slice(0, 200)}`);
        assert.match(text, /"ok":false/);
        assert.deepEqual(staging(dir), []);
      }
      // A body larger than ten 50 MB files: 413 from its Content-Length alone.
      const huge = rawRequest(server.botUrl, `/bot${token}/sendDocument`, 600_000_000);
      huge.socket.write(head(chatId));
      await until('the 413', () => huge.received().includes('\r\n\r\n{'));
      huge.socket.destroy();
      assert.match(await huge.answer, /^HTTP\/1.1 413 /);
      assert.deepEqual(staging(dir), []);
      // A method that takes no files reads the fields and drops the file parts unwritten.
      const r = await multipart(server.botUrl, token, 'sendMessage', { chat_id: String(chatId), text: 'fields only' }, { document: { data: Buffer.alloc(100_000, 2), name: 'x.bin' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(staging(dir), []);
      assert.deepEqual(kept(dir), []);
    });

    it('wrong tokens on uploads count toward the same throttle as every call: 429 past the limit', async () => {
      const botId = token.split(':')[0]!;
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await multipart(server.botUrl, `${botId}:${String(i).padStart(35, 'y')}`, 'sendDocument', { chat_id: String(chatId) }, { document: { data: Buffer.alloc(1000, 3), name: 'a.bin' } });
        statuses.push(r.status);
      }
      // The test before made one wrong call for this bot id: its tenth wrong token is the last 401.
      const first = statuses.indexOf(429);
      assert.ok(first === 9, JSON.stringify(statuses));
      assert.deepEqual(statuses.slice(first), Array(statuses.length - first).fill(429));
      assert.deepEqual(staging(dir), []);
      // The right token is still served (bot ids are public: a lock must not take the bot offline).
      assert.equal((await botApi(server.botUrl, token, 'getMe')).status, 200);
    });

    it('a connection lost mid-file, or a body without its closing boundary, leaves nothing staged', async () => {
      const start = head(chatId);
      const { socket, answer } = rawRequest(server.botUrl, `/bot${token}/sendDocument`, start.length + 5_000_000);
      socket.write(start);
      socket.write(Buffer.alloc(1_000_000, 4));
      await until('the upload is being staged', () => staging(dir).length === 1);
      socket.destroy();
      await answer;
      await until('the truncated upload is removed', () => staging(dir).length === 0);

      const whole = Buffer.concat([start, Buffer.alloc(300_000, 5)]); // no closing boundary
      const cut = rawRequest(server.botUrl, `/bot${token}/sendDocument`, whole.length);
      // Written whole and kept open (node's server drops a request whose client half-closes before the answer).
      cut.socket.write(whole);
      await until('the answer', () => cut.received().includes('\r\n\r\n{'));
      cut.socket.destroy();
      const text = await cut.answer;
      assert.match(text, /^HTTP\/1.1 400 /, text.slice(0, 200));
      await until('the unfinished part is removed', () => staging(dir).length === 0);
      assert.deepEqual(kept(dir), []);
    });

    it('a method that refuses after parsing (no such chat, a photo too big) removes the staged bytes', async () => {
      const r = await multipart(server.botUrl, token, 'sendDocument', { chat_id: '12345' }, { document: { data: Buffer.alloc(20_000, 6), name: 'a.bin' } });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      const p = await multipart(server.botUrl, token, 'sendPhoto', { chat_id: String(chatId) }, { photo: { data: Buffer.alloc(11 * 1024 * 1024, 7), name: 'a.png' } });
      assert.equal(p.status, 400, JSON.stringify(p.body));
      await until('staging empty', () => staging(dir).length === 0);
      assert.deepEqual(kept(dir), []);
    });

    it('the quota: of parallel uploads only those that fit are stored; the rest get 400 Bad Request', async () => {
      // Distinct bytes, 30,000 each: 3 fit under 100,000.
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        multipart(server.botUrl, token, 'sendDocument', { chat_id: String(chatId) }, { document: { data: Buffer.alloc(30_000, 10 + i), name: `f${i}.bin` } })));
      const ok = results.filter((r) => r.status === 200);
      assert.equal(ok.length, 3, JSON.stringify(results.map((r) => [r.status, r.body.description])));
      for (const r of results.filter((x) => x.status !== 200)) {
        assert.equal(r.status, 400);
        assert.match(String(r.body.description), /^Bad Request: not enough room: the bot's files reached its storage quota$/);
      }
      // A file sent again by its file_id stores nothing new, so it still goes through.
      quotaFileId = ((ok[0]!.body.result as { document: { file_id: string } }).document.file_id);
      assert.equal((await botApi(server.botUrl, token, 'sendDocument', { chat_id: chatId, document: quotaFileId })).status, 200);
      // The refused uploads' bytes went with their refusal: 3 kept.
      assert.equal(kept(dir).length, 3);
      await until('staging empty', () => staging(dir).length === 0);
    });

    it('the sweep: staging leftovers and kept bytes no row names, at start and when run', async () => {
      const old = new Date(Date.now() - 3600_000);
      const leftover = join(dir, 'staging', 'a'.repeat(32));
      writeFileSync(leftover, 'left by a crash');
      utimesSync(leftover, old, old);
      const fresh = join(dir, 'staging', 'b'.repeat(32));
      writeFileSync(fresh, 'being written');
      // Bytes whose row is gone: a bot deleted with its files.
      const other = await botViaBotFather(chat, 'Doomed', 'doomed_bot');
      await chat.send('doomed_bot', 'hi');
      const sent = await multipart(server.botUrl, other, 'sendDocument', { chat_id: String(chatId) }, { document: { data: Buffer.alloc(5000, 99), name: 'gone.bin' } });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const before = kept(dir);
      await server.gh.botStorage.bots.delete(Number(other.split(':')[0]));
      assert.deepEqual(kept(dir), before, 'deleting the rows removes no bytes by itself');
      for (const p of kept(dir)) utimesSync(p, old, old);

      const swept = await server.bot!.core.files.sweep();
      assert.deepEqual(swept, { staged: 1, unused: 1 });
      assert.deepEqual(staging(dir), ['b'.repeat(32)]);
      assert.equal(kept(dir).length, before.length - 1, 'only the deleted bot\'s bytes went');
      // The bytes still named by rows are all there: the quota test's documents download.
      const file = await botApi(server.botUrl, token, 'getFile', { file_id: quotaFileId });
      const path = (file.body.result as { file_path: string }).file_path;
      assert.equal((await fetch(`${server.botUrl}/file/bot${token}/${path}`)).status, 200);

      // At start: a server sweeps its folder before it serves anything.
      const other2 = mkdtempSync(join(tmpdir(), 'gh-uploads-start-'));
      mkdirSync(join(other2, 'staging'));
      const left = join(other2, 'staging', 'c'.repeat(32));
      writeFileSync(left, 'left by a crash');
      utimesSync(left, old, old);
      const second = await startGatehouse(loadConfig({
        GATEHOUSE_DATABASE_URL: 'sqlite::memory:', GATEHOUSE_ROLES: 'bot', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_LEVEL: 'silent', GATEHOUSE_FILES_DIR: other2,
      }));
      try {
        await until('the leftover swept at start', () => staging(other2).length === 0);
      } finally {
        await second.close();
        rmSync(other2, { recursive: true, force: true });
      }
    });
  });
}

describe('the quota across two servers on one PostgreSQL database', { skip: (await databaseKinds()).find((k) => k.kind === 'postgres')!.skip }, () => {
  it('parallel uploads through both stay within the quota', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-uploads-two-'));
    const server = await startBotServer({ db: 'postgres', env: { GATEHOUSE_FILES_DIR: dir, GATEHOUSE_BOT_FILE_QUOTA: String(QUOTA), GATEHOUSE_BOT_FLOOD_CHAT_RATE: '0', GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: '0' } });
    const twin = await startGatehouse(loadConfig({
      GATEHOUSE_DATABASE_URL: server.databaseUrl, GATEHOUSE_ROLES: 'bot', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_LEVEL: 'silent', GATEHOUSE_FILES_DIR: dir,
      GATEHOUSE_BOT_FILE_QUOTA: String(QUOTA), GATEHOUSE_BOT_FLOOD_CHAT_RATE: '0', GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: '0',
    }));
    try {
      const chat = new ChatApi(server.botUrl, await signedInPerson(server, 'vera'));
      const token = await botViaBotFather(chat, 'Twin', 'twin_upload_bot');
      await chat.send('twin_upload_bot', 'hi');
      const updates = await botApi(server.botUrl, token, 'getUpdates', {});
      const chatId = (updates.body.result as { message: { chat: { id: number } } }[])[0]!.message.chat.id;
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) =>
        multipart(i % 2 ? twin.bot!.url : server.botUrl, token, 'sendDocument', { chat_id: String(chatId) }, { document: { data: Buffer.alloc(30_000, 50 + i), name: `t${i}.bin` } })));
      assert.equal(results.filter((r) => r.status === 200).length, 3, JSON.stringify(results.map((r) => r.status)));
    } finally {
      await twin.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
