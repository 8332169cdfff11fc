import { sql, type Kysely } from 'kysely';
import type { BotFileStore, FileKind, StoredFile } from '../../core/bot/ports.js';
import type { DB } from '../schema.js';

export interface BotFilesTable {
  file_id: string;
  bot_id: number;
  unique_id: string;
  blob_key: string;
  kind: string;
  size: number;
  mime_type: string | null;
  file_name: string | null;
  width: number | null;
  height: number | null;
  created_at: number;
}

/** Migration 0025_bot_file_quota: the bytes a bot's file rows add up to, kept by every add and delete. */
export interface BotFileUsageTable {
  bot_id: number;
  bytes: number;
}

export interface BotFileChatsTable {
  file_id: string;
  chat_id: number;
}

/* Migration 0011_bot_files (files-migration.ts); merged into DB. */
declare module '../schema.js' {
  interface DB {
    bot_files: BotFilesTable;
    bot_file_chats: BotFileChatsTable;
    bot_file_usage: BotFileUsageTable;
  }
}

const toFile = (r: BotFilesTable): StoredFile => ({
  fileId: r.file_id, botId: Number(r.bot_id), uniqueId: r.unique_id, blobKey: r.blob_key, kind: r.kind as FileKind, size: Number(r.size),
  mimeType: r.mime_type, fileName: r.file_name, width: r.width, height: r.height, createdAt: Number(r.created_at),
});

export class SqlBotFileStore implements BotFileStore {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The quota and the insert in one transaction: the usage row is raised by a
   * conditional UPDATE (`bytes + size <= quota`), which concurrent adds, in
   * this process or another, pass one at a time (the row's lock on PostgreSQL,
   * the database's write lock on SQLite), each seeing the others' bytes.
   */
  async add(f: StoredFile, quotaBytes: number): Promise<boolean> {
    const write = async (tx: Kysely<DB>) => {
      await tx.insertInto('bot_file_usage').values({ bot_id: f.botId, bytes: 0 }).onConflict((oc) => oc.column('bot_id').doNothing()).execute();
      const raised = await tx.updateTable('bot_file_usage').set({ bytes: sql<number>`bytes + ${f.size}` })
        .where('bot_id', '=', f.botId).where(sql<boolean>`bytes + ${f.size} <= ${quotaBytes}`).executeTakeFirst();
      if (Number(raised.numUpdatedRows) === 0) return false;
      await tx.insertInto('bot_files').values({
        file_id: f.fileId, bot_id: f.botId, unique_id: f.uniqueId, blob_key: f.blobKey, kind: f.kind, size: f.size,
        mime_type: f.mimeType, file_name: f.fileName, width: f.width, height: f.height, created_at: f.createdAt,
      }).execute();
      return true;
    };
    return this.db.isTransaction ? write(this.db) : this.db.transaction().execute(write);
  }

  async keysInUse(blobKeys: readonly string[]): Promise<Set<string>> {
    if (!blobKeys.length) return new Set();
    const rows = await this.db.selectFrom('bot_files').select('blob_key').distinct().where('blob_key', 'in', [...blobKeys]).execute();
    return new Set(rows.map((r) => r.blob_key));
  }

  async get(fileId: string): Promise<StoredFile | undefined> {
    const r = await this.db.selectFrom('bot_files').selectAll().where('file_id', '=', fileId).executeTakeFirst();
    return r && toFile(r);
  }

  async grant(fileId: string, chatId: number): Promise<void> {
    await this.db.insertInto('bot_file_chats').values({ file_id: fileId, chat_id: chatId })
      .onConflict((oc) => oc.columns(['file_id', 'chat_id']).doNothing()).execute();
  }

  async granted(fileId: string, chatId: number): Promise<boolean> {
    const r = await this.db.selectFrom('bot_file_chats').select('chat_id').where('file_id', '=', fileId).where('chat_id', '=', chatId).executeTakeFirst();
    return r !== undefined;
  }
}
