import type { IncomingMessage } from 'node:http';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../core/bot/errors.js';

/**
 * multipart/form-data bodies (how clients send files) become plain fields.
 * No method we serve takes a file, so file parts are drained and dropped.
 */
export function multipartFields(app: FastifyInstance): void {
  app.addContentTypeParser('multipart/form-data', (req, payload, done) => {
    let bb: BusboyInstance;
    try {
      bb = Busboy({ headers: req.headers as IncomingMessage['headers'] & { 'content-type': string }, limits: { fields: 100, fieldSize: 64 * 1024, files: 10, fileSize: 1024 * 1024 } });
    } catch {
      done(badRequest('malformed multipart/form-data'), undefined);
      return;
    }
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    let failed = false;
    const fail = () => {
      if (failed) return;
      failed = true;
      payload.unpipe(bb);
      payload.resume();
      done(badRequest('malformed multipart/form-data'), undefined);
    };
    bb.on('field', (name: string, value: string) => {
      fields[name] = value;
    });
    bb.on('file', (_name: string, stream: NodeJS.ReadableStream) => stream.resume());
    bb.on('error', fail);
    bb.on('finish', () => {
      if (!failed) done(null, fields);
    });
    payload.on('error', fail);
    payload.pipe(bb);
  });
}
