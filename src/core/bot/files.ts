import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Document, File, PhotoSize } from '@grammyjs/types';
import { imageSize } from 'image-size';
import type { OutboundHttp } from '../outbound.js';
import type { Clock } from '../ports.js';
import { badRequest } from './errors.js';
import type { BlobStore, BotFileStore, BotRecord, FileKind, PersonStore, StagedBlob, StoredFile } from './ports.js';

/** Bot API limits (REFERENCE.md, Files): uploads up to 50 MB, photos 10 MB, downloads through getFile 20 MB. */
export const UPLOAD_MAX = 50 * 1024 * 1024;
export const PHOTO_MAX = 10 * 1024 * 1024;
export const DOWNLOAD_MAX = 20 * 1024 * 1024;
/** Sending by URL: photos up to 5 MB, other files 20 MB (Bot API, "Sending files"). */
export const URL_MAX: Record<FileKind, number> = { photo: 5 * 1024 * 1024, document: DOWNLOAD_MAX };
/** Photos: width + height at most 10,000, and neither side more than 20 times the other (Bot API sendPhoto). */
const MAX_SIDES = 10_000;
const MAX_RATIO = 20;

export const WRONG_FILE = 'wrong file identifier/HTTP URL specified';
export const URL_FAILED = 'failed to get HTTP URL content';
export const TOO_BIG = 'file is too big';
/** Past GATEHOUSE_BOT_FILE_QUOTA: the bot has stored that many bytes already. */
export const QUOTA_EXCEEDED = "not enough room: the bot's files reached its storage quota";

/**
 * Staged bytes untouched this long are leftovers (a crash, a lost
 * connection): an upload being read keeps writing, so its file stays fresh.
 */
export const STAGING_GRACE_MS = 10 * 60_000;
/** Kept bytes no row names are removed once this old: long past the moment between keeping them and adding their row. */
export const UNUSED_GRACE_MS = 10 * 60_000;
/** Blob keys asked about in one statement by the sweep. */
const SWEEP_SLICE = 500;

/**
 * A file part of a multipart request, staged in the blob store while the
 * request is read (src/http/bot/multipart.ts). A class, so a JSON body can
 * never pass for one.
 */
export class UploadedFile {
  constructor(readonly staged: StagedBlob | 'too_big', readonly fileName: string | null, readonly mimeType: string | null) {}
}

/** What a bot names a file by: an upload, a file_id, or an HTTP URL. */
export type FileSource = UploadedFile | string;

/** How long fetching a file by URL may take. */
const FETCH_TIMEOUT_MS = 30_000;

export interface BotFilesDeps {
  files: BotFileStore;
  blobs: BlobStore;
  people: Pick<PersonStore, 'get'>;
  clock: Clock;
  /** The outbound client for destinations bots choose (its SSRF guard refuses reserved addresses). */
  http: OutboundHttp;
  /** GATEHOUSE_BOT_FILE_QUOTA: the bytes one bot's files may add up to. */
  quotaBytes: number;
}

/** Maps, not objects: a file name's extension comes from the request ("x.constructor" must find nothing). */
const PHOTO_TYPES = new Map(Object.entries({ png: 'image/png', jpg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' }));
const EXTENSIONS = new Map(Object.entries({
  pdf: 'application/pdf', txt: 'text/plain', csv: 'text/csv', json: 'application/json', zip: 'application/zip', png: 'image/png',
  jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', html: 'text/html', xml: 'application/xml', gz: 'application/gzip',
}));

/** file_id: random, so it tells nothing and cannot be guessed; the kind's letter first for the logs. */
const newFileId = (kind: FileKind) => `${kind === 'photo' ? 'P' : 'D'}${randomBytes(24).toString('base64url')}`;
const FILE_ID = /^[PD][A-Za-z0-9_-]{32}$/;
/** file_unique_id: the same for the same bytes (for every bot), and not the bytes' plain hash. */
const uniqueIdOf = (sha256: string) => createHash('sha256').update(`file_unique_id:${sha256}`).digest('base64url').slice(0, 16);

const extension = (name: string | null) => /\.([A-Za-z0-9]{1,8})$/.exec(name ?? '')?.[1]?.toLowerCase();

/** A file name as a document shows it: no folders, no control characters, at most 255 characters. */
function cleanName(name: string | null | undefined): string | null {
  const base = (name ?? '').split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return base || null;
}

/** Width and height from the image header (PNG, JPEG, GIF, WebP), as displayed (EXIF orientation). */
export function photoDimensions(bytes: Uint8Array): { width: number; height: number; type: string } {
  let r: ReturnType<typeof imageSize>;
  try {
    r = imageSize(bytes);
  } catch {
    throw badRequest('IMAGE_PROCESS_FAILED');
  }
  if (!r.type || !PHOTO_TYPES.has(r.type) || !r.width || !r.height) throw badRequest('IMAGE_PROCESS_FAILED');
  const turned = (r.orientation ?? 1) >= 5;
  return { width: turned ? r.height : r.width, height: turned ? r.width : r.height, type: r.type };
}

/**
 * Files bots send (Bot API sendPhoto, sendDocument, getFile): the bytes in
 * the blob store, a row per file_id, and who may read it: the bot that owns
 * the file_id, and the person of each chat it was sent into.
 */
export class BotFiles {
  constructor(private readonly deps: BotFilesDeps) {}

  /** Where uploads are staged while a request is read. */
  get blobs(): BlobStore {
    return this.deps.blobs;
  }

  /** The file a send names, stored when new; refusals in the Bot API's words. */
  async resolve(bot: BotRecord, source: FileSource, kind: FileKind, signal: AbortSignal): Promise<StoredFile> {
    if (source instanceof UploadedFile) {
      if (source.staged === 'too_big') throw badRequest(TOO_BIG);
      return this.store(bot, source.staged, kind, cleanName(source.fileName), source.mimeType);
    }
    const s = source.trim();
    if (/^https?:\/\//i.test(s)) return this.fromUrl(bot, s, kind, signal);
    const f = FILE_ID.test(s) ? await this.deps.files.get(s) : undefined;
    if (!f || f.botId !== bot.id) throw badRequest(WRONG_FILE);
    if (f.kind !== kind) throw badRequest('type of file mismatch');
    return f;
  }

  private async fromUrl(bot: BotRecord, url: string, kind: FileKind, signal: AbortSignal): Promise<StoredFile> {
    const max = URL_MAX[kind];
    // No redirects are followed and reserved addresses are refused at connect time (src/infra/outbound).
    const res = await this.deps.http({ url, timeoutMs: FETCH_TIMEOUT_MS, maxBytes: max + 1, signal }).catch(() => undefined);
    if (!res || res.status !== 200 || !res.bytes) throw badRequest(URL_FAILED);
    if (res.truncated || res.bytes.length > max) throw badRequest(TOO_BIG);
    const bytes = res.bytes;
    const staged = await this.deps.blobs.stage(Readable.from([bytes]), URL_MAX[kind]);
    if (staged === 'too_big') throw badRequest(TOO_BIG);
    try {
      return await this.store(bot, staged, kind, cleanName(decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '')), null);
    } finally {
      await this.deps.blobs.discard(staged);
    }
  }

  private async store(bot: BotRecord, staged: StagedBlob, kind: FileKind, fileName: string | null, mimeType: string | null): Promise<StoredFile> {
    const { blobs, files, clock } = this.deps;
    if (staged.size === 0) throw badRequest('file must be non-empty');
    let width: number | null = null;
    let height: number | null = null;
    let mime = mimeType && /^[\w.+-]+\/[\w.+-]+$/.test(mimeType) ? mimeType.toLowerCase() : null;
    if (kind === 'photo') {
      if (staged.size > PHOTO_MAX) throw badRequest(TOO_BIG);
      const d = photoDimensions(await blobs.readStaged(staged));
      if (d.width + d.height > MAX_SIDES || Math.max(d.width, d.height) > MAX_RATIO * Math.min(d.width, d.height)) throw badRequest('PHOTO_INVALID_DIMENSIONS');
      ({ width, height } = d);
      mime = PHOTO_TYPES.get(d.type)!;
    } else {
      // As Telegram, the file name's extension decides over the type a client labelled the part with.
      mime = EXTENSIONS.get(extension(fileName) ?? '') ?? mime ?? 'application/octet-stream';
    }
    const f: StoredFile = {
      fileId: newFileId(kind), botId: bot.id, uniqueId: uniqueIdOf(staged.sha256), blobKey: await blobs.keep(staged), kind, size: staged.size,
      mimeType: mime, fileName: kind === 'document' ? fileName ?? 'document' : null, width, height, createdAt: clock.now(),
    };
    // The quota check and the row are one atomic step (the store's conditional UPDATE). Bytes kept for a refused
    // file go at once unless a row names them (the same bytes stored before).
    if (!(await files.add(f, this.deps.quotaBytes))) {
      await this.removeUnused(f.blobKey).catch(() => undefined);
      throw badRequest(QUOTA_EXCEEDED);
    }
    // Kept again now that a row names them: a sweep that moved unused bytes aside in between finds the row,
    // or has removed them and this puts them back (BlobStore.removeUnused).
    await blobs.keep(staged);
    return f;
  }

  /** Removes the kept bytes of `key` unless a row names them, asked once they are moved aside (BlobStore.removeUnused). */
  private removeUnused(key: string): Promise<boolean> {
    return this.deps.blobs.removeUnused(key, async () => (await this.deps.files.keysInUse([key])).has(key));
  }

  /**
   * Removes staged leftovers and kept bytes no file row names any more (a
   * deleted bot's, a refused upload's). Run at start and on a timer
   * (src/gatehouse.ts). File times are the file system's, so the wall clock.
   */
  async sweep(grace: { stagingMs: number; unusedMs: number } = { stagingMs: STAGING_GRACE_MS, unusedMs: UNUSED_GRACE_MS }): Promise<{ staged: number; unused: number }> {
    const { blobs, files } = this.deps;
    const staged = await blobs.sweepStaging(Date.now() - grace.stagingMs);
    let unused = 0;
    for await (const batch of blobs.kept()) {
      const old = batch.filter((b) => b.keptAt < Date.now() - grace.unusedMs).map((b) => b.key);
      // Asked in slices, so no statement carries more keys than a database takes parameters.
      for (let i = 0; i < old.length; i += SWEEP_SLICE) {
        const slice = old.slice(i, i + SWEEP_SLICE);
        const used = await files.keysInUse(slice);
        for (const key of slice) if (!used.has(key) && (await this.removeUnused(key))) unused++;
      }
    }
    return { staged, unused };
  }

  /** The person of chat `chatId` may read the file from now on. */
  grant(f: StoredFile, chatId: number): Promise<void> {
    return this.deps.files.grant(f.fileId, chatId);
  }

  /** The files of a forwarded or copied message: the copy's chat may read them too. */
  async grantIds(fileIds: string[], chatId: number): Promise<void> {
    for (const id of new Set(fileIds)) await this.deps.files.grant(id, chatId);
  }

  /** getFile: a path to download the file at, for files up to 20 MB. */
  async getFile(bot: BotRecord, fileId: string | undefined): Promise<File> {
    const id = (fileId ?? '').trim();
    if (!id) throw badRequest('file_id not specified');
    const f = FILE_ID.test(id) ? await this.deps.files.get(id) : undefined;
    if (!f || f.botId !== bot.id) throw badRequest('invalid file_id');
    const file: File = { file_id: f.fileId, file_unique_id: f.uniqueId, file_size: f.size };
    if (f.size > DOWNLOAD_MAX) throw badRequest(TOO_BIG);
    return { ...file, file_path: filePath(f) };
  }

  /** `/file/bot<token>/<file_path>`: the bytes of a file of this bot, or undefined (404). */
  async download(bot: BotRecord, path: string): Promise<{ file: StoredFile; body: Readable } | undefined> {
    const m = /^(photos|documents)\/([PD][A-Za-z0-9_-]{32})(\.[a-z0-9]{1,8})?$/.exec(path);
    const f = m ? await this.deps.files.get(m[2]!) : undefined;
    if (!f || f.botId !== bot.id || f.size > DOWNLOAD_MAX || filePath(f) !== path) return undefined;
    return { file: f, body: this.deps.blobs.open(f.blobKey) };
  }

  /** `GET /client/files/<file_id>`: only for the person of a chat the file was sent into. */
  async forPerson(userId: string, fileId: string): Promise<{ file: StoredFile; body: Readable } | undefined> {
    if (!FILE_ID.test(fileId)) return undefined;
    const person = await this.deps.people.get(userId);
    const f = person && (await this.deps.files.get(fileId));
    if (!person || !f || !(await this.deps.files.granted(f.fileId, person.id))) return undefined;
    return { file: f, body: this.deps.blobs.open(f.blobKey) };
  }
}

/** Where getFile says a file is; the extension helps clients that go by it. */
export function filePath(f: StoredFile): string {
  const ext = f.kind === 'photo' ? (f.mimeType === 'image/jpeg' ? 'jpg' : f.mimeType?.split('/')[1]) : extension(f.fileName);
  return `${f.kind === 'photo' ? 'photos' : 'documents'}/${f.fileId}${ext ? `.${ext}` : ''}`;
}

/** A sent photo's sizes, largest last: the one we keep (no smaller copies are made). */
export const photoSizes = (f: StoredFile): PhotoSize[] => [{ file_id: f.fileId, file_unique_id: f.uniqueId, width: f.width ?? 0, height: f.height ?? 0, file_size: f.size }];

export function documentObject(f: StoredFile): Document {
  return {
    file_id: f.fileId, file_unique_id: f.uniqueId, ...(f.fileName ? { file_name: f.fileName } : {}),
    ...(f.mimeType ? { mime_type: f.mimeType } : {}), file_size: f.size,
  };
}
