import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { generateSecretKey, parseSecretKey, SecretKeyError, secretKeyId } from '../../core/secret-box.js';

/** Name of the key file in the data folder, used when GATEHOUSE_SECRET_KEY is unset. */
export const KEY_FILE = 'secret.key';

/** Where a rotation stages the new key until its transaction has committed. */
export const stagedKeyFile = (file: string) => `${file}.new`;

export interface SecretKeySource {
  key: Buffer;
  /** Said in errors: which setting or file the key came from. */
  source: string;
  /** The key file, when the key came from one. */
  file?: string;
}

/**
 * The data folder: the directory of the SQLite database file; `./data` (the
 * default database's folder) for PostgreSQL; none for an in-memory database,
 * whose secrets live no longer than the process.
 */
export function dataFolder(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return resolve('data');
  const path = databaseUrl.slice('sqlite:'.length);
  return path === ':memory:' ? undefined : dirname(resolve(path));
}

/** The key of GATEHOUSE_SECRET_KEY when set; else the data folder's key file, created on first use. */
export function loadSecretKey(databaseUrl: string, setting: string | undefined): SecretKeySource {
  if (setting) return { key: parseSecretKey(setting, 'GATEHOUSE_SECRET_KEY'), source: 'GATEHOUSE_SECRET_KEY' };
  const folder = dataFolder(databaseUrl);
  if (!folder) return { key: generateSecretKey(), source: 'a key for this in-memory database' };
  const file = join(folder, KEY_FILE);
  return { key: readOrCreateKeyFile(file), source: file, file };
}

function readKeyFile(file: string): Buffer {
  const { mode } = statSync(file);
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new SecretKeyError(`${file} may be read by other users (mode ${(mode & 0o777).toString(8)}): chmod 600 it`);
  }
  return parseSecretKey(readFileSync(file, 'utf8'), file);
}

/**
 * Every process of a deployment must end up with the same key, also when
 * several start at once on a fresh data folder. The key is written whole to a
 * file of this process's own, then linked to the shared name: link(2) fails
 * when the name exists (like O_EXCL), so exactly one process creates it, and
 * no process ever reads a half-written file.
 */
function readOrCreateKeyFile(file: string): Buffer {
  try {
    return readKeyFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const key = generateSecretKey();
  const own = writeKeyFile(`${file}.${process.pid}.${randomBytes(6).toString('hex')}`, key);
  try {
    linkSync(own, file);
    syncFolder(dirname(file));
    return key;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return readKeyFile(file);
  } finally {
    unlinkSync(own);
  }
}

/** Writes `key` to a new file (O_EXCL) of mode 0600, flushed to disk. */
function writeKeyFile(file: string, key: Buffer): string {
  const fd = openSync(file, 'wx', 0o600);
  try {
    writeSync(fd, `${key.toString('base64')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return file;
}

/** So a created or renamed file survives a power loss. */
function syncFolder(folder: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(folder, 'r');
    fsyncSync(fd);
  } catch {
    // Not every platform or file system can sync a directory.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Rotation, before its transaction: the new key next to the old one, so a crash in between loses neither. */
export function stageKeyFile(file: string, key: Buffer): void {
  const staged = stagedKeyFile(file);
  try {
    unlinkSync(staged);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  writeKeyFile(staged, key);
  syncFolder(dirname(file));
}

/** Rotation, after its transaction committed: the staged key replaces the old one (rename(2) is atomic). */
export function commitKeyFile(file: string): void {
  renameSync(stagedKeyFile(file), file);
  syncFolder(dirname(file));
}

/** Rotation, after its transaction failed: the old key stays. */
export function discardStagedKeyFile(file: string): void {
  try {
    unlinkSync(stagedKeyFile(file));
  } catch {
    // Already gone.
  }
}

/** For a key mismatch at start: a rotation that committed but did not get to replace the key file. */
export function stagedKeyHint(file: string | undefined): string {
  if (!file) return '';
  try {
    const key = parseSecretKey(readFileSync(stagedKeyFile(file), 'utf8'), stagedKeyFile(file));
    return `. ${stagedKeyFile(file)} holds key ${secretKeyId(key)} from an interrupted \`gatehouse secret-key rotate\`: if that is the key named above, move it to ${file}`;
  } catch {
    return '';
  }
}
