import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message, PhotoSize, Document, File } from '@grammyjs/types';
import { Bot, InputFile } from 'grammy';
import { Telegraf } from 'telegraf';
import { Bot as NtbaBot, InputFile as NtbaInputFile } from 'node-telegram-bot-api';
import { fromPath } from 'node-telegram-bot-api/node';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botApi, botViaBotFather, listen, signedInPerson, startBotServer, type BotTestServer, type Person } from './support.js';
import { gif, jpeg, multipart, png } from './files-support.js';

type Media = Message.TextMessage & { photo?: PhotoSize[]; document?: Document; caption?: string; caption_entities?: unknown[]; edit_date?: number };

/** The person's `GET /client/files/<file_id>`. */
async function personFile(base: string, person: Person | undefined, fileId: string) {
  const res = await fetch(`${base}/client/files/${encodeURIComponent(fileId)}`, { headers: person ? { authorization: `Bearer ${person.token}` } : {} });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** getFile, then the download at `{bot_api_url}/file/bot<token>/<file_path>`. */
async function download(base: string, token: string, fileId: string): Promise<Buffer> {
  const got = await botApi(base, token, 'getFile', { file_id: fileId });
  assert.equal(got.status, 200, JSON.stringify(got.body));
  const file = got.body.result as File;
  const res = await fetch(`${base}/file/bot${token}/${file.file_path}`);
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

const PHOTO = png(64, 48);
const REPORT = Buffer.from('quarterly report\n'.repeat(100));

/**
 * Photos and documents with unmodified grammY, telegraf and
 * node-telegram-bot-api bots: uploads (multipart), re-sends by file_id,
 * getFile and downloads, and the person's copy through the chat client API.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`files: sendPhoto, sendDocument, getFile (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let fred: Person;
    let gina: Person;
    let chat: ChatApi;
    let other: ChatApi;
    const dir = mkdtempSync(join(tmpdir(), 'gh-files-test-'));
    before(async () => {
      server = await startBotServer({ db: kind });
      fred = await signedInPerson(server, 'fred');
      gina = await signedInPerson(server, 'gina');
      chat = new ChatApi(server.botUrl, fred);
      other = new ChatApi(server.botUrl, gina);
    });
    after(async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('grammY: a photo from a Buffer and a document from a path, re-sent by file_id; getFile and the download; the person sees both', async () => {
      const token = await botViaBotFather(chat, 'Snap', 'snap_grammy_bot');
      const bot = new Bot(token, { client: { apiRoot: server.botUrl } });
      const path = join(dir, 'report.txt');
      writeFileSync(path, REPORT);
      const sent: Message[] = [];
      bot.command('photo', async (ctx) => {
        sent.push(await ctx.replyWithPhoto(new InputFile(PHOTO, 'chart.png'), { caption: '<b>Chart</b> of today', parse_mode: 'HTML' }));
      });
      bot.command('doc', async (ctx) => {
        sent.push(await ctx.replyWithDocument(new InputFile(path), { caption: 'The report' }));
      });
      bot.command('again', async (ctx) => {
        const photo = (sent[0] as Message.PhotoMessage).photo.at(-1)!;
        sent.push(await ctx.replyWithPhoto(photo.file_id));
        sent.push(await ctx.replyWithDocument((sent[1] as Message.DocumentMessage).document.file_id));
      });
      // The person may see a message (committed) a moment before the bot reads the answer to its call.
      const answered = async (n: number) => {
        for (let i = 0; i < 200 && sent.length < n; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(sent.length, n, `the bot has read the answers to its ${n} calls`);
      };
      await new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }));
      try {
        const hello = await chat.send('snap_grammy_bot', '/photo');
        const [shown] = (await chat.replies('snap_grammy_bot', hello.message_id)) as Media[];
        await answered(1);
        const photo = (sent[0] as Message.PhotoMessage).photo;
        assert.equal(photo.length, 1);
        assert.equal(photo[0]!.width, 64);
        assert.equal(photo[0]!.height, 48);
        assert.equal(photo[0]!.file_size, PHOTO.length);
        assert.match(photo[0]!.file_unique_id, /^[A-Za-z0-9_-]{16}$/);
        assert.equal((sent[0] as Message.PhotoMessage).caption, 'Chart of today');
        assert.deepEqual((sent[0] as Message.PhotoMessage).caption_entities, [{ type: 'bold', offset: 0, length: 5 }]);
        assert.equal((sent[0] as { text?: string }).text, undefined);
        assert.deepEqual(shown!.photo, photo);
        assert.equal(shown!.caption, 'Chart of today');
        assert.equal(shown!.text, undefined);

        const mine = await personFile(server.botUrl, fred, photo[0]!.file_id);
        assert.equal(mine.status, 200);
        assert.equal(mine.headers.get('content-type'), 'image/png');
        assert.deepEqual(mine.bytes, PHOTO);
        assert.deepEqual(await download(server.botUrl, token, photo[0]!.file_id), PHOTO);

        const askDoc = await chat.send('snap_grammy_bot', '/doc');
        const [docShown] = (await chat.replies('snap_grammy_bot', askDoc.message_id)) as Media[];
        await answered(2);
        const doc = (sent[1] as Message.DocumentMessage).document;
        assert.equal(doc.file_name, 'report.txt');
        assert.equal(doc.mime_type, 'text/plain');
        assert.equal(doc.file_size, REPORT.length);
        assert.deepEqual(docShown!.document, doc);
        const docBytes = await personFile(server.botUrl, fred, doc.file_id);
        assert.deepEqual(docBytes.bytes, REPORT);
        assert.match(docBytes.headers.get('content-disposition') ?? '', /^attachment; filename="report.txt"/);
        assert.deepEqual(await download(server.botUrl, token, doc.file_id), REPORT);

        // By file_id: the same file, no new bytes.
        const again = await chat.send('snap_grammy_bot', '/again');
        await chat.replies('snap_grammy_bot', again.message_id, 2);
        await answered(4);
        assert.deepEqual((sent[2] as Message.PhotoMessage).photo, photo);
        assert.deepEqual((sent[3] as Message.DocumentMessage).document, doc);
      } finally {
        await bot.stop();
      }
    });

    it('telegraf: a JPEG from a Buffer, then editMessageCaption on it; the same bytes keep their file_unique_id', async () => {
      const token = await botViaBotFather(chat, 'Cam', 'cam_telegraf_bot');
      const bot = new Telegraf(token, { telegram: { apiRoot: server.botUrl } });
      const hello = await chat.send('cam_telegraf_bot', 'hi');
      const sent = await bot.telegram.sendPhoto(hello.chat.id, { source: jpeg(1280, 720), filename: 'cam.jpg' }, { caption: 'first' });
      assert.deepEqual(sent.photo.map((p) => [p.width, p.height]), [[1280, 720]]);
      const edited = (await bot.telegram.editMessageCaption(hello.chat.id, sent.message_id, undefined, '*second*', { parse_mode: 'MarkdownV2' })) as Message.PhotoMessage;
      assert.equal(edited.caption, 'second');
      assert.deepEqual(edited.caption_entities, [{ type: 'bold', offset: 0, length: 6 }]);
      assert.ok((edited as { edit_date?: number }).edit_date);
      await assert.rejects(bot.telegram.editMessageCaption(hello.chat.id, sent.message_id, undefined, '*second*', { parse_mode: 'MarkdownV2' }), /message is not modified/);
      const doc = await bot.telegram.sendDocument(hello.chat.id, { source: jpeg(1280, 720), filename: 'cam.jpg' });
      assert.equal(doc.document.file_unique_id, sent.photo[0]!.file_unique_id);
      assert.notEqual(doc.document.file_id, sent.photo[0]!.file_id);
      assert.equal(doc.document.mime_type, 'image/jpeg');
      // A GIF is a photo too; its size comes from its header.
      const anim = await bot.telegram.sendPhoto(hello.chat.id, { source: gif(300, 200), filename: 'a.gif' });
      assert.deepEqual([anim.photo[0]!.width, anim.photo[0]!.height], [300, 200]);
      const link = await bot.telegram.getFileLink(sent.photo[0]!.file_id);
      const res = await fetch(link);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), jpeg(1280, 720));
      const messages = (await chat.messages('cam_telegraf_bot', hello.message_id)) as Media[];
      assert.equal(messages[0]!.caption, 'second');
    });

    it('node-telegram-bot-api: an upload from a path and from bytes, getFile', async () => {
      const token = await botViaBotFather(chat, 'Classic files', 'files_ntba_bot');
      const bot = new NtbaBot(token, { apiRoot: server.botUrl });
      const hello = await chat.send('files_ntba_bot', 'hi');
      const path = join(dir, 'notes.csv');
      writeFileSync(path, 'a,b\n1,2\n');
      const doc = (await bot.api.sendDocument({ chat_id: hello.chat.id, document: await fromPath(path), caption: 'numbers' })) as Message.DocumentMessage;
      assert.equal(doc.document.file_name, 'notes.csv');
      assert.equal(doc.document.mime_type, 'text/csv');
      assert.equal(doc.caption, 'numbers');
      const photo = (await bot.api.sendPhoto({ chat_id: hello.chat.id, photo: new NtbaInputFile(png(20, 10), { filename: 'p.png', contentType: 'image/png' }) })) as Message.PhotoMessage;
      assert.deepEqual([photo.photo[0]!.width, photo.photo[0]!.height], [20, 10]);
      const file = (await bot.api.getFile({ file_id: doc.document.file_id })) as File;
      assert.match(file.file_path!, /^documents\/.+\.csv$/);
      assert.equal(file.file_size, 8);
      assert.deepEqual(await download(server.botUrl, token, doc.document.file_id), Buffer.from('a,b\n1,2\n'));
    });

    it('files are readable only by their bot and the people of the chats they were sent into', async () => {
      const token = await botViaBotFather(chat, 'Owner', 'owner_files_bot');
      const strangerToken = await botViaBotFather(chat, 'Stranger', 'stranger_files_bot');
      const hello = await chat.send('owner_files_bot', 'hi');
      await other.send('owner_files_bot', 'hi too');
      await chat.send('stranger_files_bot', 'hi');
      const sent = await multipart(server.botUrl, token, 'sendPhoto', { chat_id: String(hello.chat.id) }, { photo: { data: PHOTO, name: 'p.png' } });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const fileId = ((sent.body.result as Message.PhotoMessage).photo[0]!).file_id;

      // Another person (who talks to the same bot), no token, a token without a file: 404 or 401, never the bytes.
      assert.equal((await personFile(server.botUrl, gina, fileId)).status, 404);
      assert.equal((await personFile(server.botUrl, undefined, fileId)).status, 401);
      assert.equal((await personFile(server.botUrl, fred, 'P' + 'x'.repeat(32))).status, 404);
      assert.equal((await personFile(server.botUrl, fred, '../../secret.key')).status, 404);
      // Another bot: not its file_id.
      assert.deepEqual((await botApi(server.botUrl, strangerToken, 'getFile', { file_id: fileId })).body, { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' });
      assert.deepEqual((await botApi(server.botUrl, strangerToken, 'sendPhoto', { chat_id: hello.chat.id, photo: fileId })).body,
        { ok: false, error_code: 400, description: 'Bad Request: wrong file identifier/HTTP URL specified' });
      const path = ((await botApi(server.botUrl, token, 'getFile', { file_id: fileId })).body.result as File).file_path!;
      const stolen = await fetch(`${server.botUrl}/file/bot${strangerToken}/${path}`);
      assert.equal(stolen.status, 404);
      assert.deepEqual(await stolen.json(), { ok: false, error_code: 404, description: 'Not Found' });
      assert.equal((await fetch(`${server.botUrl}/file/bot${token.slice(0, -1)}x/${path}`)).status, 401);
      assert.equal((await fetch(`${server.botUrl}/file/bot${token}/photos/..%2f..%2fsecret.key`)).status, 404);

      // Forwarded into gina's chat, she may read it from then on; a copy takes a new caption.
      const chats = await other.messages('owner_files_bot');
      const sentMessage = (sent.body.result as Message.PhotoMessage).message_id;
      const forwarded = await botApi(server.botUrl, token, 'forwardMessage', { chat_id: chats[0]!.chat.id, from_chat_id: hello.chat.id, message_id: sentMessage });
      assert.deepEqual((forwarded.body.result as Message.PhotoMessage).photo[0]!.file_id, fileId);
      assert.deepEqual((await personFile(server.botUrl, gina, fileId)).bytes, PHOTO);
      const copied = await botApi(server.botUrl, token, 'copyMessage', { chat_id: chats[0]!.chat.id, from_chat_id: hello.chat.id, message_id: sentMessage, caption: '<i>copy</i>', parse_mode: 'HTML' });
      assert.equal(copied.status, 200, JSON.stringify(copied.body));
      const [copy] = (await other.messages('owner_files_bot', (copied.body.result as { message_id: number }).message_id - 1)) as Media[];
      assert.equal(copy!.caption, 'copy');
      assert.deepEqual(copy!.caption_entities, [{ type: 'italic', offset: 0, length: 4 }]);
      assert.equal(copy!.photo![0]!.file_id, fileId);
      const resent = await botApi(server.botUrl, token, 'sendPhoto', { chat_id: chats[0]!.chat.id, photo: fileId });
      assert.equal(resent.status, 200);
    });

    it('by HTTP URL only where the outbound guard allows: a loopback address is refused and never asked', async () => {
      const token = await botViaBotFather(chat, 'Fetcher', 'fetch_refused_bot');
      const hello = await chat.send('fetch_refused_bot', 'hi');
      let asked = 0;
      const site = await listen((_req, res) => {
        asked++;
        res.end(PHOTO);
      });
      try {
        for (const url of [`${site.url}/p.png`, 'http://localhost:1/p.png', 'http://169.254.169.254/latest/meta-data', 'ftp://example.com/p.png']) {
          const r = await botApi(server.botUrl, token, 'sendPhoto', { chat_id: hello.chat.id, photo: url });
          assert.equal(r.status, 400, url);
          assert.match(String(r.body.description), /^Bad Request: (failed to get HTTP URL content|wrong file identifier\/HTTP URL specified)$/, url);
        }
        assert.equal(asked, 0);
      } finally {
        await site.close();
      }
    });

    it('bad values of every new parameter get the Bot API envelope with the right error_code', async () => {
      const token = await botViaBotFather(chat, 'Strict', 'strict_files_bot');
      const hello = await chat.send('strict_files_bot', 'hi');
      const chatId = String(hello.chat.id);
      const refused = async (r: { status: number; body: Record<string, unknown> }, code: number, description: string) => {
        assert.deepEqual(r.body, { ok: false, error_code: code, description });
        assert.equal(r.status, code);
      };
      const api = (method: string, params: Record<string, unknown>) => botApi(server.botUrl, token, method, params);
      const up = (method: string, fields: Record<string, string>, name: string, data: Buffer, file = 'f.bin') => multipart(server.botUrl, token, method, fields, { [name]: { data, name: file } });

      await refused(await api('sendPhoto', { chat_id: chatId }), 400, 'Bad Request: there is no photo in the request');
      await refused(await api('sendDocument', { chat_id: chatId, document: '' }), 400, 'Bad Request: there is no document in the request');
      await refused(await api('sendPhoto', { chat_id: chatId, photo: { url: 'x' } }), 400, 'Bad Request: field "photo" must be of type InputFile or String');
      await refused(await api('sendPhoto', { chat_id: chatId, photo: 'not-a-file-id' }), 400, 'Bad Request: wrong file identifier/HTTP URL specified');
      await refused(await api('sendPhoto', { photo: 'x' }), 400, 'Bad Request: chat_id is empty');
      await refused(await api('sendPhoto', { chat_id: '999', photo: 'x' }), 400, 'Bad Request: chat not found');
      await refused(await up('sendPhoto', { chat_id: chatId }, 'photo', Buffer.from('not an image')), 400, 'Bad Request: IMAGE_PROCESS_FAILED');
      await refused(await up('sendPhoto', { chat_id: chatId }, 'photo', jpeg(9000, 2000)), 400, 'Bad Request: PHOTO_INVALID_DIMENSIONS');
      await refused(await up('sendPhoto', { chat_id: chatId }, 'photo', jpeg(2100, 100)), 400, 'Bad Request: PHOTO_INVALID_DIMENSIONS');
      await refused(await up('sendPhoto', { chat_id: chatId }, 'photo', png(10, 10, 10 * 1024 * 1024)), 400, 'Bad Request: file is too big');
      await refused(await up('sendDocument', { chat_id: chatId }, 'document', Buffer.alloc(0)), 400, 'Bad Request: file must be non-empty');
      await refused(await up('sendPhoto', { chat_id: chatId, caption: 'c'.repeat(1025) }, 'photo', PHOTO), 400, 'Bad Request: message caption is too long');
      await refused(await up('sendPhoto', { chat_id: chatId, caption: '<b>x', parse_mode: 'HTML' }, 'photo', PHOTO), 400,
        "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"b\"");
      await refused(await up('sendPhoto', { chat_id: chatId, caption: 'x', parse_mode: 'Word' }, 'photo', PHOTO), 400, 'Bad Request: unsupported parse_mode');
      await refused(await api('sendPhoto', { chat_id: chatId, photo: 'x', caption: 'x', caption_entities: 'nope' }), 400, "Bad Request: can't parse message entities JSON object");
      await refused(await api('sendDocument', { chat_id: chatId, document: 'x', reply_markup: '{' }), 400, "Bad Request: can't parse reply keyboard markup JSON object");
      await refused(await api('sendDocument', { chat_id: chatId, document: 'x', reply_parameters: { message_id: 99999 } }), 400, 'Bad Request: message to be replied not found');
      await refused(await api('getFile', {}), 400, 'Bad Request: file_id not specified');
      await refused(await api('getFile', { file_id: 'nope' }), 400, 'Bad Request: invalid file_id');
      await refused(await api('getFile', { file_id: { a: 1 } }), 400, 'Bad Request: field "file_id" must be of type String');

      // A photo's file_id is not a document's.
      const photo = await up('sendPhoto', { chat_id: chatId }, 'photo', PHOTO, 'p.png');
      const photoId = (photo.body.result as Message.PhotoMessage).photo[0]!.file_id;
      await refused(await api('sendDocument', { chat_id: chatId, document: photoId }), 400, 'Bad Request: type of file mismatch');

      // Over 50 MB: the file is too big (the body is read to its end, then answered).
      const big = await up('sendDocument', { chat_id: chatId }, 'document', Buffer.alloc(50 * 1024 * 1024 + 1), 'big.bin');
      await refused(big, 400, 'Bad Request: file is too big');
      // Exactly 50 MB is taken, and getFile refuses it past 20 MB.
      const max = await up('sendDocument', { chat_id: chatId }, 'document', Buffer.alloc(50 * 1024 * 1024, 1), 'max.bin');
      assert.equal(max.status, 200, JSON.stringify(max.body));
      await refused(await api('getFile', { file_id: (max.body.result as Message.DocumentMessage).document.file_id }), 400, 'Bad Request: file is too big');
      // A body announced past what any request may carry: 413, as Telegram answers it.
      const early = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(`${server.botUrl}/bot${token}/sendDocument`, {
          method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(600 * 1024 * 1024) },
        }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => { body += c.toString(); });
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body });
          });
        });
        req.on('error', reject);
        // Only the start of the announced body is sent: the answer comes without the rest.
        req.write('--x\r\n');
      });
      assert.equal(early.status, 413);
      assert.deepEqual(JSON.parse(early.body), { ok: false, error_code: 413, description: 'Request Entity Too Large' });

      // editMessageCaption on a photo: bad caption values.
      const m = (photo.body.result as Message.PhotoMessage).message_id;
      await refused(await api('editMessageCaption', { chat_id: chatId, message_id: m, caption: 'x'.repeat(1025) }), 400, 'Bad Request: message caption is too long');
      await refused(await api('editMessageCaption', { chat_id: chatId, message_id: m, caption: '*x', parse_mode: 'MarkdownV2' }), 400,
        "Bad Request: can't parse entities: Can't find end of Bold entity at byte offset 0");
      const cleared = await api('editMessageCaption', { chat_id: chatId, message_id: m, caption: 'now' });
      assert.equal((cleared.body.result as Media).caption, 'now');
    });
  });
}

describe('files by HTTP URL (private addresses allowed for this test)', () => {
  let server: BotTestServer;
  let chat: ChatApi;
  let site: Awaited<ReturnType<typeof listen>>;
  before(async () => {
    server = await startBotServer({ env: { GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    chat = new ChatApi(server.botUrl, await signedInPerson(server, 'hugo'));
    site = await listen((req, res) => {
      if (req.url === '/chart.png') return void res.end(PHOTO);
      if (req.url === '/big.png') return void res.end(png(10, 10, 5 * 1024 * 1024));
      if (req.url === '/files/r%C3%A9sum%C3%A9.pdf') return void res.end(REPORT);
      if (req.url === '/moved.png') return void res.writeHead(302, { location: '/chart.png' }).end();
      res.writeHead(404).end();
    });
  });
  after(async () => {
    await site.close();
    await server.close();
  });

  it('sendPhoto and sendDocument fetch the URL once and keep the file (no redirects, 5 MB for photos)', async () => {
    const token = await botViaBotFather(chat, 'Fetcher', 'fetch_url_bot');
    const hello = await chat.send('fetch_url_bot', 'hi');
    const photo = await botApi(server.botUrl, token, 'sendPhoto', { chat_id: hello.chat.id, photo: `${site.url}/chart.png`, caption: 'from the web' });
    assert.equal(photo.status, 200, JSON.stringify(photo.body));
    const sizes = (photo.body.result as Message.PhotoMessage).photo;
    assert.deepEqual([sizes[0]!.width, sizes[0]!.height, sizes[0]!.file_size], [64, 48, PHOTO.length]);
    assert.deepEqual(await download(server.botUrl, token, sizes[0]!.file_id), PHOTO);
    const doc = await botApi(server.botUrl, token, 'sendDocument', { chat_id: hello.chat.id, document: `${site.url}/files/r%C3%A9sum%C3%A9.pdf` });
    const d = (doc.body.result as Message.DocumentMessage).document;
    assert.equal(d.file_name, 'résumé.pdf');
    assert.equal(d.mime_type, 'application/pdf');
    const refused = async (url: string, description: string) =>
      assert.deepEqual((await botApi(server.botUrl, token, 'sendPhoto', { chat_id: hello.chat.id, photo: url })).body, { ok: false, error_code: 400, description });
    await refused(`${site.url}/big.png`, 'Bad Request: file is too big');
    await refused(`${site.url}/moved.png`, 'Bad Request: failed to get HTTP URL content');
    await refused(`${site.url}/missing.png`, 'Bad Request: failed to get HTTP URL content');
  });
});
