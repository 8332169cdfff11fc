import { sql, type Kysely } from 'kysely';
import { SEALED_PREFIX, SecretBox, SecretKeyError, sealedKeyId } from '../../core/secret-box.js';
import type { DB } from '../schema.js';

/** A column holding a secret sealed by SecretBox; `aad` binds a value to its table, column and row. */
export interface SealedColumn {
  table: string;
  id: string;
  column: string;
  aad(rowId: string | number): string;
}

const sealed = (table: string, id: string, column: string): SealedColumn => ({ table, id, column, aad: (rowId) => `${table}.${column}:${rowId}` });

export const ENDPOINT_SECRET = sealed('webhook_endpoints', 'id', 'secret');
export const ENDPOINT_PREVIOUS_SECRET = sealed('webhook_endpoints', 'id', 'previous_secret');
export const BOT_WEBHOOK_SECRET = sealed('bots', 'id', 'webhook_secret');
export const SIGNING_KEY = sealed('signing_keys', 'kid', 'private_key_pem');
/** The secret of a `client_secret_jwt` client: the server needs it in clear to check an HMAC (migration 0008_oauth_current). */
export const CLIENT_JWT_SECRET = sealed('clients', 'id', 'jwt_secret');

/** An authenticator app's TOTP secret (migration 0015_mfa): the server computes the codes from it. */
export const MFA_TOTP_SECRET = sealed('mfa_totp', 'user_id', 'secret');

/** A queued e-mail (migration 0027_mail): its links carry single-use tokens until it is delivered. */
export const MAIL_MESSAGE = sealed('mail_messages', 'id', 'message');

/** Every sealed column: what start-up checks and `gatehouse secret-key rotate` re-encrypts. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [ENDPOINT_SECRET, ENDPOINT_PREVIOUS_SECRET, BOT_WEBHOOK_SECRET, SIGNING_KEY, CLIENT_JWT_SECRET, MFA_TOTP_SECRET, MAIL_MESSAGE];

const CHECK_ID = 'current';
const CHECK_AAD = 'secret_key_check.sealed:current';
const CHECK_TEXT = 'gatehouse';

interface Row { id: string | number; value: string }

/** Rows of `c` whose value is not sealed under `keyId` (plaintext from before encryption, or another key). */
async function rowsNotUnder(db: Kysely<DB>, c: SealedColumn, keyId: string | undefined): Promise<Row[]> {
  const col = sql.ref(c.column);
  const under = keyId === undefined ? sql`` : sql` and substr(${col}, 1, ${sql.lit(SEALED_PREFIX.length + keyId.length + 1)}) <> ${`${SEALED_PREFIX}${keyId}.`}`;
  const { rows } = await sql<Row>`select ${sql.ref(c.id)} as id, ${col} as value from ${sql.table(c.table)} where ${col} is not null${under}`.execute(db);
  return rows;
}

/** One conditional UPDATE: a value another process changed meanwhile is left alone. */
async function replace(db: Kysely<DB>, c: SealedColumn, row: Row, value: string): Promise<void> {
  await sql`update ${sql.table(c.table)} set ${sql.ref(c.column)} = ${value} where ${sql.ref(c.id)} = ${row.id} and ${sql.ref(c.column)} = ${row.value}`.execute(db);
}

/**
 * At start, before anything is served: refuses a key that is not the
 * deployment's (nothing is changed then), and encrypts secrets stored in
 * clear by versions before encryption. The first process to start on a
 * database records its key's check row.
 */
export async function prepareSecrets(db: Kysely<DB>, box: SecretBox, source: string): Promise<{ encrypted: number }> {
  await db.insertInto('secret_key_check').values({ id: CHECK_ID, sealed: box.seal(CHECK_TEXT, CHECK_AAD) })
    .onConflict((oc) => oc.column('id').doNothing()).execute();
  const check = await db.selectFrom('secret_key_check').select('sealed').where('id', '=', CHECK_ID).executeTakeFirstOrThrow();
  if (sealedKeyId(check.sealed) !== box.keyId) {
    throw new SecretKeyError(`this database's secrets are encrypted under secret key ${sealedKeyId(check.sealed) ?? '?'}, but ${source} holds key ${box.keyId}. `
      + 'Every process of one deployment needs the same key (GATEHOUSE_SECRET_KEY, or the key file in the data folder); nothing was changed');
  }
  box.open(check.sealed, CHECK_AAD);
  let encrypted = 0;
  for (const c of SEALED_COLUMNS) {
    for (const row of await rowsNotUnder(db, c, box.keyId)) {
      if (row.value.startsWith(SEALED_PREFIX)) {
        throw new SecretKeyError(`${c.aad(row.id)} is encrypted under secret key ${sealedKeyId(row.value) ?? '?'}, not this deployment's key ${box.keyId} (${source}); nothing was changed`);
      }
      await replace(db, c, row, box.seal(row.value, c.aad(row.id)));
      encrypted++;
    }
  }
  return { encrypted };
}

/** `gatehouse secret-key rotate`: every sealed value and the check row, under `next`, in one transaction. */
export async function resealSecrets(db: Kysely<DB>, current: SecretBox, next: SecretBox): Promise<{ reencrypted: number }> {
  return db.transaction().execute(async (trx) => {
    let reencrypted = 0;
    for (const c of SEALED_COLUMNS) {
      for (const row of await rowsNotUnder(trx, c, undefined)) {
        const plain = row.value.startsWith(SEALED_PREFIX) ? current.open(row.value, c.aad(row.id)) : row.value;
        await replace(trx, c, row, next.seal(plain, c.aad(row.id)));
        reencrypted++;
      }
    }
    const check = await trx.selectFrom('secret_key_check').select('sealed').where('id', '=', CHECK_ID).executeTakeFirstOrThrow();
    current.open(check.sealed, CHECK_AAD);
    await trx.updateTable('secret_key_check').set({ sealed: next.seal(CHECK_TEXT, CHECK_AAD) }).where('id', '=', CHECK_ID).execute();
    return { reencrypted };
  });
}
