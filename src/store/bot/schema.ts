/**
 * Tables of the chat-bot interface (migrations 0002_bot and 0007_bot_interactive),
 * merged into the database types of src/store/schema.ts by module augmentation.
 */
declare module '../schema.js' {
  /* Chat-bot interface (migration 0002_bot); merged into DB below. */
  export interface BotsTable {
    id: number;
    username: string;
    username_lower: string;
    name: string;
    owner_user_id: string | null;
    token_hash: string | null;
    webhook_url: string | null;
    webhook_secret: string | null;
    webhook_max_connections: number | null;
    webhook_allowed_updates: string | null; // JSON array
    webhook_set_at: number | null;
    allowed_updates: string | null; // JSON array
    last_error_date: number | null;
    last_error_message: string | null;
    last_update_id: number;
    created_at: number;
  }

  export interface BotPeopleTable {
    user_id: string;
    id: number;
    created_at: number;
  }

  export interface BotChatsTable {
    bot_id: number;
    chat_id: number;
    user_id: string;
    last_message_id: number;
    state: string | null; // JSON
    created_at: number;
    updated_at: number;
  }

  export interface BotMessagesTable {
    bot_id: number;
    chat_id: number;
    message_id: number;
    from_bot: number;
    date: number;
    text: string;
    entities: string | null; // JSON array
    reply_to_message_id: number | null;
    edit_date: number | null;
    reply_markup: string | null; // JSON, 0007_bot_interactive
    content: string | null; // JSON, 0007_bot_interactive
  }

  /* Chat-bot interface, two-way chats (migration 0007_bot_interactive). */
  export interface BotCallbackQueriesTable {
    id: string;
    bot_id: number;
    chat_id: number;
    message_id: number;
    data: string;
    created_at: number;
    answered_at: number | null;
    answer: string | null; // JSON
  }

  export interface BotCommandsTable {
    bot_id: number;
    scope: string; // JSON BotCommandScope, canonical
    language_code: string;
    commands: string; // JSON array
  }

  export interface BotProfilesTable {
    bot_id: number;
    language_code: string;
    name: string | null;
    description: string | null;
    short_description: string | null;
  }

  export interface BotUpdatesTable {
    bot_id: number;
    update_id: number;
    chat_id: number | null;
    payload: string; // JSON Update
    created_at: number;
    attempts: number;
    next_attempt_at: number;
  }

  // Declaration merging keeps the tables above out of the original DB block.
  export interface DB {
    bots: BotsTable;
    bot_people: BotPeopleTable;
    bot_chats: BotChatsTable;
    bot_messages: BotMessagesTable;
    bot_updates: BotUpdatesTable;
    bot_callback_queries: BotCallbackQueriesTable;
    bot_commands: BotCommandsTable;
    bot_profiles: BotProfilesTable;
  }
}

export {};
