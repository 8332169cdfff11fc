import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, botError } from '../../core/bot/errors.js';
import { UPLOAD_MAX, UploadedFile } from '../../core/bot/files.js';
import type { BlobStore, StagedBlob } from '../../core/bot/ports.js';

/** Room for the fields and part headers around the files of one request. */
const OVERHEAD = 1024 * 1024;
/** Bot API: at most 10 files in one request (sendMediaGroup), each up to 50 MB. */
const MAX_FILES = 10;

const staging = new WeakMap<FastifyRequest, StagedBlob[]>();

/**
 * multipart/form-data bodies (how clients send files): fields become plain
 * parameters, each file part is streamed into the blob store's staging area
 * (never held in memory) and becomes an UploadedFile; one past 50 MB is a
 * `too_big` UploadedFile, which the method refuses ("file is too big"). A
 * body larger than the files it may carry is 413, as Telegram answers it.
 * Staged bytes a method did not keep are discarded when the answer is sent.
 */
export function multipartFields(app: FastifyInstance, blobs: BlobStore): void {
  app.addHook('onResponse', async (req) => {
    const staged = staging.get(req);
    if (staged) await Promise.all(staged.map((s) => blobs.discard(s)));
  });
  app.addContentTypeParser('multipart/form-data', (req, payload, done) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_FILES * UPLOAD_MAX + OVERHEAD) {
      payload.resume();
      done(botError(413), undefined);
      return;
    }
    let bb: BusboyInstance;
    try {
      bb = Busboy({
        headers: req.headers as IncomingMessage['headers'] & { 'content-type': string },
        limits: { fields: 100, fieldSize: 64 * 1024, files: MAX_FILES, fileSize: UPLOAD_MAX },
      });
    } catch {
      done(badRequest('malformed multipart/form-data'), undefined);
      return;
    }
    const fields: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    const staged: StagedBlob[] = [];
    staging.set(req, staged);
    const pending: Promise<void>[] = [];
    let failed = false;
    const fail = (err: Error = badRequest('malformed multipart/form-data')) => {
      if (failed) return;
      failed = true;
      payload.unpipe(bb);
      payload.resume();
      done(err, undefined);
    };
    bb.on('field', (name: string, value: string) => {
      fields[name] = value;
    });
    bb.on('file', (name: string, stream: Readable & { truncated?: boolean }, fileName: string, _encoding: string, mimeType: string) => {
      pending.push(blobs.stage(stream, UPLOAD_MAX + 1).then((s) => {
        if (s !== 'too_big') staged.push(s);
        const tooBig = s === 'too_big' || stream.truncated === true;
        fields[name] = new UploadedFile(tooBig ? 'too_big' : s, fileName || null, mimeType || null);
      }, (err: unknown) => {
        stream.resume();
        fail(err as Error);
      }));
    });
    bb.on('filesLimit', () => fail(badRequest('too many files')));
    bb.on('error', () => fail());
    bb.on('finish', () => {
      void Promise.all(pending).then(() => {
        if (!failed) done(null, fields);
      });
    });
    payload.on('error', () => fail());
    payload.pipe(bb);
  });
}
