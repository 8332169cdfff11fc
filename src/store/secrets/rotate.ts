import { generateSecretKey, SecretBox, SecretKeyError } from '../../core/secret-box.js';
import { openStorage } from '../index.js';
import { commitKeyFile, discardStagedKeyFile, loadSecretKey, stageKeyFile } from './key-file.js';
import { resealSecrets } from './sealed.js';

export interface Rotation {
  keyId: string;
  previousKeyId: string;
  reencrypted: number;
  /** The key file now holding the new key; unset when the key comes from GATEHOUSE_SECRET_KEY. */
  keyFile: string | undefined;
}

/**
 * `gatehouse secret-key rotate`: every stored secret re-encrypted under
 * `nextKey` in one transaction. With a key file, the new key is written beside
 * the old one first and replaces it once the transaction has committed, so a
 * crash at any point leaves a key that opens the database. Running processes
 * keep the old key in memory: stop them first, start them after.
 */
export async function rotateSecretKey(databaseUrl: string, setting: string | undefined, nextKey: Buffer = generateSecretKey()): Promise<Rotation> {
  // Opening checks the current key and encrypts what was still in clear.
  const storage = await openStorage(databaseUrl, { secretKey: setting });
  try {
    const current = storage.secrets;
    const next = new SecretBox(nextKey);
    if (next.keyId === current.keyId) throw new SecretKeyError('the new secret key is the current one');
    const { file } = loadSecretKey(databaseUrl, setting);
    if (file) stageKeyFile(file, nextKey);
    let reencrypted: number;
    try {
      ({ reencrypted } = await resealSecrets(storage.database.db, current, next));
    } catch (e) {
      if (file) discardStagedKeyFile(file);
      throw e;
    }
    if (file) commitKeyFile(file);
    return { keyId: next.keyId, previousKeyId: current.keyId, reencrypted, keyFile: file };
  } finally {
    await storage.close();
  }
}
