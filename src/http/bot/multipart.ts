import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BotApi } from '../../core/bot/api.js';
import { badRequest, botError } from '../../core/bot/errors.js';
import { UPLOAD_MAX, UploadedFile } from '../../core/bot/files.js';
import type { BlobStore, BotRecord, StagedBlob } from '../../core/bot/ports.js';

/** Room for the fields and part headers around the files of one request. */
const OVERHEAD = 1024 * 1024;
/** Bot API: at most 10 files in one request (sendMediaGroup), each up to 50 MB. */
const MAX_FILES = 10;

/**
 * What one multipart request wrote to the staging area, until it is
 * released: when parsing fails (a truncated or malformed body, a lost
 * connection, too many files), when the method returned or threw, or at the
 * latest when the response ended. Bytes still being written when it is
 * released are removed as soon as their write stops.
 */
class Upload {
  readonly staged: StagedBlob[] = [];
  readonly streams = new Set<Readable>();
  readonly writes = new Set<Promise<void>>();
  released = false;

  constructor(private readonly blobs: BlobStore, readonly bot: BotRecord | undefined) {}

  /** A finished write: kept for the method, or removed at once when the request is over already. */
  keepUntilRelease(s: StagedBlob): void {
    if (this.released) void this.blobs.discard(s);
    else this.staged.push(s);
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    // A part whose body never ended (the connection closed mid-file) would hold its write open: stop it (stage() removes its file).
    for (const stream of this.streams) stream.destroy(new Error('request ended'));
    await Promise.allSettled([...this.writes]);
    await Promise.all(this.staged.splice(0).map((s) => this.blobs.discard(s)));
  }
}

const uploads = new WeakMap<FastifyRequest, Upload>();

/**
 * The bot a multipart request's token named when its body was admitted
 * (undefined: not a multipart Bot API call), so the call is not
 * authenticated twice.
 */
export const admittedBot = (req: FastifyRequest): BotRecord | undefined => uploads.get(req)?.bot;

/** Removes what the request staged that no method kept; idempotent. */
export async function releaseUpload(req: FastifyRequest): Promise<void> {
  await uploads.get(req)?.release();
}

/** `/bot<token>/<method>` (or `/bot<token>/test/<method>`): the token and the method; undefined for other paths. */
function botCall(req: FastifyRequest): { token: string; method: string } | undefined {
  const { bot, method } = (req.params ?? {}) as { bot?: unknown; method?: unknown };
  if (typeof bot !== 'string' || typeof method !== 'string' || !bot.startsWith('bot') || !method) return undefined;
  return { token: bot.slice(3), method };
}

/**
 * multipart/form-data bodies (how clients send files). Before a byte of the
 * body is read, the Bot API call is admitted (BotApi.admitUpload): a wrong
 * token is 401 (429 past the wrong-token limits), an unknown method 404, and
 * nothing is written. Fields become plain parameters; a file part is
 * streamed into the blob store's staging area (never held in memory) only
 * for a method that takes files, and becomes an UploadedFile; one past 50 MB
 * is a `too_big` UploadedFile, which the method refuses ("file is too big").
 * Other paths and methods get the fields only, file parts are drained. A
 * body larger than the files it may carry is 413, as Telegram answers it.
 * Every way a request ends removes the staged bytes no method kept.
 */
export function multipartFields(app: FastifyInstance, blobs: BlobStore, api: BotApi): void {
  app.addHook('onResponse', async (req) => releaseUpload(req));
  app.addHook('onRequestAbort', async (req) => releaseUpload(req));
  app.addContentTypeParser('multipart/form-data', (req, payload, done) => {
    const refuse = (err: Error) => {
      payload.resume();
      done(err, undefined);
    };
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_FILES * UPLOAD_MAX + OVERHEAD) return refuse(botError(413));
    const call = botCall(req);
    const admitted = call ? api.admitUpload(call.token, call.method, req.ip) : Promise.resolve(undefined);
    admitted.then((a) => parse(req, payload, blobs, a, done), refuse);
  });
}

type Done = (err: Error | null, body?: unknown) => void;

function parse(req: FastifyRequest, payload: IncomingMessage, blobs: BlobStore, admitted: { bot: BotRecord; takesFiles: boolean } | undefined, done: Done): void {
  let bb: BusboyInstance;
  try {
    bb = Busboy({
      headers: req.headers as IncomingMessage['headers'] & { 'content-type': string },
      limits: { fields: 100, fieldSize: 64 * 1024, files: MAX_FILES, fileSize: UPLOAD_MAX },
    });
  } catch {
    payload.resume();
    done(badRequest('malformed multipart/form-data'), undefined);
    return;
  }
  const upload = new Upload(blobs, admitted?.bot);
  uploads.set(req, upload);
  const fields: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  let failed = false;
  const fail = (err: Error = badRequest('malformed multipart/form-data')) => {
    if (failed) return;
    failed = true;
    payload.unpipe(bb);
    payload.resume();
    void upload.release();
    done(err, undefined);
  };
  bb.on('field', (name: string, value: string) => {
    fields[name] = value;
  });
  bb.on('file', (name: string, stream: Readable & { truncated?: boolean }, fileName: string, _encoding: string, mimeType: string) => {
    if (!admitted?.takesFiles || failed) {
      // No method here takes files: the part is read and dropped, never written.
      stream.resume();
      return;
    }
    upload.streams.add(stream);
    const write = blobs.stage(stream, UPLOAD_MAX + 1).then((s) => {
      upload.streams.delete(stream);
      if (s !== 'too_big') upload.keepUntilRelease(s);
      const tooBig = s === 'too_big' || stream.truncated === true;
      fields[name] = new UploadedFile(tooBig ? 'too_big' : s, fileName || null, mimeType || null);
    }, (err: unknown) => {
      upload.streams.delete(stream);
      stream.resume();
      fail(err as Error);
    });
    upload.writes.add(write);
  });
  bb.on('filesLimit', () => fail(badRequest('too many files')));
  // A body that ends before its closing boundary (truncated) is an error here, with the open part's write stopped by release().
  bb.on('error', () => fail());
  bb.on('finish', () => {
    void Promise.all([...upload.writes]).then(() => {
      if (!failed) done(null, fields);
    });
  });
  payload.on('error', () => fail());
  // The connection closed before the whole body came (Content-Length not reached).
  payload.on('close', () => {
    if (!payload.complete) fail(botError(400, 'request body ended early'));
  });
  // The connection may have closed while the token was checked.
  if (payload.destroyed && !payload.complete) return fail(botError(400, 'request body ended early'));
  payload.pipe(bb);
}
