import type { BotCommand } from '@grammyjs/types';
import type { Kysely } from 'kysely';
import type { BotProfileStore, ProfileField } from '../../core/bot/ports.js';
import type { DB } from '../schema.js';

export class SqlBotProfileStore implements BotProfileStore {
  constructor(private readonly db: Kysely<DB>) {}

  async getCommands(botId: number, scope: string, languageCode: string): Promise<BotCommand[] | undefined> {
    const r = await this.db.selectFrom('bot_commands').select('commands')
      .where('bot_id', '=', botId).where('scope', '=', scope).where('language_code', '=', languageCode).executeTakeFirst();
    return r && (JSON.parse(r.commands) as BotCommand[]);
  }

  async setCommands(botId: number, scope: string, languageCode: string, commands: BotCommand[] | null): Promise<void> {
    if (commands === null) {
      await this.db.deleteFrom('bot_commands').where('bot_id', '=', botId).where('scope', '=', scope).where('language_code', '=', languageCode).execute();
      return;
    }
    const json = JSON.stringify(commands);
    await this.db.insertInto('bot_commands').values({ bot_id: botId, scope, language_code: languageCode, commands: json })
      .onConflict((oc) => oc.columns(['bot_id', 'scope', 'language_code']).doUpdateSet({ commands: json })).execute();
  }

  async getProfile(botId: number, languageCode: string): Promise<Partial<Record<ProfileField, string>>> {
    const r = await this.db.selectFrom('bot_profiles').selectAll().where('bot_id', '=', botId).where('language_code', '=', languageCode).executeTakeFirst();
    const out: Partial<Record<ProfileField, string>> = {};
    if (r?.name != null) out.name = r.name;
    if (r?.description != null) out.description = r.description;
    if (r?.short_description != null) out.short_description = r.short_description;
    return out;
  }

  /** One upsert: the row is made with only this field set, or the field is changed in place. */
  async setProfile(botId: number, languageCode: string, field: ProfileField, value: string | null): Promise<void> {
    await this.db.insertInto('bot_profiles')
      .values({ bot_id: botId, language_code: languageCode, name: null, description: null, short_description: null, [field]: value })
      .onConflict((oc) => oc.columns(['bot_id', 'language_code']).doUpdateSet({ [field]: value })).execute();
  }
}
