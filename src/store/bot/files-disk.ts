import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, unlink, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { BlobStore, StagedBlob } from '../../core/bot/ports.js';
import { dataFolder } from '../secrets/key-file.js';

class TooBig extends Error {}

/**
 * File bytes in a folder (GATEHOUSE_FILES_DIR): `staging/<random>` while a
 * request is read, then `<first two hex digits>/<sha256>` once a method keeps
 * them. Keeping is a hard link, so two processes keeping the same bytes
 * both succeed and neither sees a half-written file.
 */
export class DiskBlobStore implements BlobStore {
  private constructor(private readonly dir: string, private readonly temporary: boolean) {}

  /** `dir` undefined (an in-memory database): a temporary folder removed at close. */
  static async open(dir: string | undefined): Promise<DiskBlobStore> {
    const root = dir ?? (await mkdtemp(join(tmpdir(), 'gatehouse-files-')));
    await mkdir(join(root, 'staging'), { recursive: true });
    return new DiskBlobStore(root, dir === undefined);
  }

  /** GATEHOUSE_FILES_DIR, else `files` in the data folder; a temporary folder for an in-memory database. */
  static forDeployment(filesDir: string | undefined, databaseUrl: string): Promise<DiskBlobStore> {
    const folder = dataFolder(databaseUrl);
    return DiskBlobStore.open(filesDir ?? (folder ? join(folder, 'files') : undefined));
  }

  private staged(id: string) {
    if (!/^[0-9a-f]{32}$/.test(id)) throw new Error('bad staging id');
    return join(this.dir, 'staging', id);
  }

  private keptPath(key: string) {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new Error('bad blob key');
    return join(this.dir, key.slice(0, 2), key);
  }

  async stage(source: Readable, maxBytes: number): Promise<StagedBlob | 'too_big'> {
    const id = randomBytes(16).toString('hex');
    const path = this.staged(id);
    const hash = createHash('sha256');
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > maxBytes) return done(new TooBig());
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(source, count, createWriteStream(path, { mode: 0o600 }));
    } catch (e) {
      await unlink(path).catch(() => undefined);
      if (e instanceof TooBig) {
        // The rest of the upload is read and dropped, so the request can still be answered.
        source.resume();
        return 'too_big';
      }
      throw e;
    }
    return { id, sha256: hash.digest('hex'), size };
  }

  readStaged(staged: StagedBlob): Promise<Buffer> {
    return readFile(this.staged(staged.id));
  }

  async keep(staged: StagedBlob): Promise<string> {
    const key = staged.sha256;
    const path = this.keptPath(key);
    await mkdir(join(this.dir, key.slice(0, 2)), { recursive: true });
    try {
      await link(this.staged(staged.id), path);
    } catch (e) {
      // The same bytes are kept already: marked as kept just now, so the sweep of unused bytes leaves them alone.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const now = new Date();
      await utimes(path, now, now).catch(() => undefined);
    }
    return key;
  }

  async discard(staged: StagedBlob): Promise<void> {
    await unlink(this.staged(staged.id)).catch(() => undefined);
  }

  async sweepStaging(before: number): Promise<number> {
    const folder = join(this.dir, 'staging');
    let removed = 0;
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      const path = join(folder, name);
      const s = await stat(path).catch(() => undefined);
      // A file still being written has a recent mtime: only leftovers are old.
      if (!s || s.mtimeMs >= before) continue;
      if (await unlink(path).then(() => true, () => false)) removed++;
    }
    return removed;
  }

  async *kept(): AsyncIterable<{ key: string; keptAt: number }[]> {
    const folders = (await readdir(this.dir).catch(() => [] as string[])).filter((n) => /^[0-9a-f]{2}$/.test(n));
    for (const folder of folders) {
      const batch: { key: string; keptAt: number }[] = [];
      for (const name of await readdir(join(this.dir, folder)).catch(() => [] as string[])) {
        if (/^[0-9a-f]{64}$/.test(name)) {
          const s = await stat(join(this.dir, folder, name)).catch(() => undefined);
          if (s) batch.push({ key: name, keptAt: s.mtimeMs });
        } else if (/^[0-9a-f]{64}\.gone-[0-9a-f]{16}$/.test(name)) {
          // A removal interrupted (the process ended) between moving aside and deciding: put back, decided by a later sweep.
          const s = await stat(join(this.dir, folder, name)).catch(() => undefined);
          if (s && s.ctimeMs < Date.now() - 60_000) await rename(join(this.dir, folder, name), join(this.dir, folder, name.slice(0, 64))).catch(() => undefined);
        }
      }
      if (batch.length) yield batch;
    }
  }

  async removeUnused(key: string, inUse: () => Promise<boolean>): Promise<boolean> {
    const path = this.keptPath(key);
    const aside = `${path}.gone-${randomBytes(8).toString('hex')}`;
    // Moved aside first: a keep() from now on finds the name free and links the upload's own bytes there.
    if (!(await rename(path, aside).then(() => true, () => false))) return false;
    let used: boolean;
    try {
      used = await inUse();
    } catch (e) {
      await rename(aside, path).catch(() => undefined);
      throw e;
    }
    if (used) {
      await rename(aside, path).catch(() => undefined);
      return false;
    }
    await unlink(aside).catch(() => undefined);
    return true;
  }

  open(key: string): Readable {
    return createReadStream(this.keptPath(key));
  }

  async close(): Promise<void> {
    if (this.temporary) await rm(this.dir, { recursive: true, force: true });
  }
}
