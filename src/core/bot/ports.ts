import type { Readable } from 'node:stream';
import type { BotCommand, Document, LinkPreviewOptions, MessageEntity, MessageOrigin, PhotoSize, Update } from '@grammyjs/types';
import type { ReplyMarkup } from './keyboards.js';
import type { Recorder } from '../notify/record.js';
import type { Transactional } from '../ports.js';

/**
 * Storage ports of the chat-bot interface. Each SQL adapter (SQLite,
 * PostgreSQL) implements them; every method is one atomic statement unless
 * it says otherwise, multi-step writes go through `BotStorage.transaction`
 * (`Transactional`, src/core/ports.ts).
 * Times are Unix milliseconds; `date` fields of messages are Unix seconds as
 * the Bot API shows them.
 */

export interface Webhook {
  url: string;
  secretToken: string | null;
  maxConnections: number;
  allowedUpdates: string[] | null;
  setAt: number;
}

export interface BotRecord {
  id: number;
  username: string;
  name: string;
  /** Who created it through BotFather or the CLI; null for BotFather itself. */
  ownerUserId: string | null;
  /** SHA-256 of the token; null for accounts answered in-process (BotFather). */
  tokenHash: string | null;
  webhook: Webhook | null;
  /** getUpdates' allowed_updates, kept between calls when omitted. */
  allowedUpdates: string[] | null;
  lastErrorDate: number | null;
  lastErrorMessage: string | null;
  createdAt: number;
}

export type NewBot = Pick<BotRecord, 'id' | 'username' | 'name' | 'ownerUserId' | 'tokenHash' | 'createdAt'>;

/** A person as bots see them: the numeric id doubles as the private chat id. */
export interface Person {
  userId: string;
  id: number;
  username: string;
  name: string | null;
}

export interface ChatRecord {
  botId: number;
  chatId: number;
  userId: string;
  lastMessageId: number;
  /** BotFather's conversation state (JSON), null when idle. */
  state: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface StoredMessage {
  botId: number;
  chatId: number;
  messageId: number;
  /** Sent by the bot (true) or by the person (false). */
  fromBot: boolean;
  date: number;
  text: string;
  entities: MessageEntity[] | null;
  replyToMessageId: number | null;
  editDate: number | null;
  /** As the bot sent it: the bot sees inline keyboards, the person every kind (objects.ts). */
  replyMarkup: ReplyMarkup | null;
  /** Message fields beyond the text, as the Bot API names them. */
  content: MessageContent | null;
}

/** Fields of a Message beyond its text, stored as they are shown. */
export interface MessageContent {
  forward_origin?: MessageOrigin;
  has_protected_content?: true;
  link_preview_options?: LinkPreviewOptions;
  /** A photo or document message: its text and entities are shown as caption and caption_entities (objects.ts). */
  photo?: PhotoSize[];
  document?: Document;
  show_caption_above_media?: true;
  has_media_spoiler?: true;
}

export type NewMessage = Omit<StoredMessage, 'messageId' | 'editDate' | 'replyMarkup' | 'content'> & { replyMarkup?: ReplyMarkup | null; content?: MessageContent | null };

/** What a message's edit changes; `replyMarkup` undefined keeps the markup. */
export interface MessagePatch {
  text: string;
  entities: MessageEntity[] | null;
  editDate: number | null;
  replyMarkup?: ReplyMarkup | null;
}

/** answerCallbackQuery's answer, as the person's press request receives it. */
export interface CallbackAnswer {
  text?: string;
  show_alert?: boolean;
  url?: string;
  cache_time?: number;
}

/** A press of an inline button (Bot API CallbackQuery), answered at most once. */
export interface StoredCallbackQuery {
  id: string;
  botId: number;
  chatId: number;
  messageId: number;
  data: string;
  createdAt: number;
  answeredAt: number | null;
  answer: CallbackAnswer | null;
}

export interface StoredUpdate {
  botId: number;
  updateId: number;
  chatId: number | null;
  update: Update;
  createdAt: number;
  /** Webhook delivery bookkeeping. */
  attempts: number;
  nextAttemptAt: number;
}

/**
 * A store's answer, not an HTTP one: BotFather turns it into a chat reply and
 * the CLI into `invalidRequest`, so it stays outside GatehouseError.
 */
export class BotUsernameTakenError extends Error {
  constructor(username: string) {
    super(`bot username already taken: ${username}`);
    this.name = 'BotUsernameTakenError';
  }
}

export interface BotStore {
  /** Throws BotUsernameTakenError when the username is taken regardless of case. */
  create(bot: NewBot): Promise<void>;
  get(id: number): Promise<BotRecord | undefined>;
  findByTokenHash(hash: string): Promise<BotRecord | undefined>;
  /** Case-insensitive. */
  findByUsername(username: string): Promise<BotRecord | undefined>;
  listByOwner(userId: string): Promise<BotRecord[]>;
  setTokenHash(id: number, hash: string | null): Promise<void>;
  /** The name getMe answers as `first_name` and messages show (setMyName and BotFather's /setname for the default language). */
  setName(id: number, name: string): Promise<void>;
  /** Deletes the bot with its chats, messages and updates. */
  delete(id: number): Promise<void>;
  setWebhook(id: number, webhook: Webhook | null): Promise<void>;
  setAllowedUpdates(id: number, allowed: string[] | null): Promise<void>;
  setLastError(id: number, date: number | null, message: string | null): Promise<void>;
  /** Bots with a webhook set (the deliverer's work list after a restart). */
  listWithWebhook(): Promise<BotRecord[]>;
}

export interface PersonStore {
  /** The person's numeric id, created on first use (`candidate` when free). */
  ensure(userId: string, candidate: number): Promise<number>;
  get(userId: string): Promise<Person | undefined>;
  getById(id: number): Promise<Person | undefined>;
  /** Case-insensitive. */
  findByUsername(username: string): Promise<Person | undefined>;
}

/** A person's messages into their chat with a bot, for ChatStore.addPersonMessages. */
export interface PersonMessages {
  person: Person;
  messages: { message: NewMessage; update?: (stored: StoredMessage) => (updateId: number) => Update }[];
}

export interface ChatStore {
  /** Creates the private chat if missing; returns it either way. */
  open(botId: number, chatId: number, userId: string, now: number): Promise<ChatRecord>;
  get(botId: number, chatId: number): Promise<ChatRecord | undefined>;
  /** The chat and its person, by the person's id or username (a leading @ ignored, any case), in one read; undefined when either is missing. */
  withPerson(botId: number, chat: number | string): Promise<{ person: Person; chat: ChatRecord } | undefined>;
  listForUser(userId: string): Promise<ChatRecord[]>;
  setState(botId: number, chatId: number, state: string | null): Promise<void>;
  /** Allocates the next message_id of the chat atomically and stores the message. */
  addMessage(m: NewMessage, now: number): Promise<StoredMessage>;
  /**
   * Messages into one chat, with consecutive message_ids from one allocation,
   * all stored or none; with the chat as it is after them and its person
   * (as `withPerson`). Undefined, nothing stored, when the chat or its
   * person is missing.
   */
  addMessages(botId: number, chatId: number, ms: NewMessage[], now: number): Promise<{ person: Person; chat: ChatRecord; messages: StoredMessage[] } | undefined>;
  /**
   * People's messages to one bot, each into the person's chat, with the
   * bot's updates for them (`update`: the update for the message as stored,
   * given its update_id; all of the messages or none have one): one
   * statement where the database allows, atomic by itself, the updates' ids
   * from one allocation in the order given. `person` is the chat's person as
   * the caller expects it, since the updates it builds carry their names.
   * Absent where the database has no such statement (SQLite). Resolves
   * undefined when it cannot (an update of another shape, a chat missing, a
   * person other than expected): then nothing is stored.
   */
  addPersonMessages?(botId: number, chats: PersonMessages[], now: number): Promise<{ chat: ChatRecord; messages: StoredMessage[]; updates: Update[] }[] | undefined>;
  getMessage(botId: number, chatId: number, messageId: number): Promise<StoredMessage | undefined>;
  /** `erase`: the old text must not stay recoverable from the database files (a token shown once). */
  editMessage(botId: number, chatId: number, messageId: number, patch: MessagePatch, opts?: { erase?: boolean }): Promise<boolean>;
  deleteMessage(botId: number, chatId: number, messageId: number): Promise<boolean>;
  /** Messages with message_id > after, oldest first. */
  messagesAfter(botId: number, chatId: number, after: number, limit: number): Promise<StoredMessage[]>;
  /** The newest message of each chat given (for the chat list). */
  lastMessage(botId: number, chatId: number): Promise<StoredMessage | undefined>;
}

/** What UpdateStore.pollAs read: the bot row's state for getUpdates, and the updates from the offset. */
export interface PolledUpdates {
  webhookSet: boolean;
  allowedUpdates: string[] | null;
  updates: StoredUpdate[];
}

export interface UpdateStore {
  /**
   * Allocates the bot's next update_id atomically (one more than the last,
   * from a random start) and stores the update `build` makes with it.
   */
  add(botId: number, chatId: number | null, build: (updateId: number) => Update, now: number): Promise<Update>;
  /** Several updates with consecutive ids from one allocation (call inside a transaction), in the order given. */
  addMany(botId: number, items: { chatId: number | null; build: (updateId: number) => Update }[], now: number): Promise<Update[]>;
  /** Updates with update_id >= fromId (all when undefined), oldest first. */
  list(botId: number, fromId: number | undefined, limit: number): Promise<StoredUpdate[]>;
  /** Confirms (deletes) every update below `updateId`. */
  deleteBelow(botId: number, updateId: number): Promise<number>;
  /** deleteBelow(offset), then list(offset): getUpdates with an offset, in one statement where the database allows. */
  confirmAndList(botId: number, offset: number, limit: number): Promise<StoredUpdate[]>;
  /**
   * getUpdates with an offset, as its bot row is stored now: undefined when
   * the bot is gone or its token hash is no longer `tokenHash`; with a
   * webhook set, nothing confirmed or listed; otherwise confirmAndList. One
   * statement where the database allows (the row read with the confirmation,
   * not a round trip before it).
   */
  pollAs(botId: number, tokenHash: string, offset: number, limit: number): Promise<PolledUpdates | undefined>;
  /** Keeps only the newest `count` updates. */
  keepLast(botId: number, count: number): Promise<void>;
  deleteAll(botId: number): Promise<void>;
  delete(botId: number, updateId: number): Promise<void>;
  count(botId: number): Promise<number>;
  /** Webhook retry bookkeeping. */
  markAttempt(botId: number, updateId: number, attempts: number, nextAttemptAt: number): Promise<void>;
  /** Updates are kept 24 hours (Bot API, getUpdates). */
  purgeOlderThan(time: number): Promise<number>;
}

/** An answerCallbackQuery to record. */
export interface CallbackAnswerWrite {
  botId: number;
  id: string;
  answer: CallbackAnswer;
  now: number;
  notBefore: number;
}

export interface CallbackQueryStore {
  /** Unanswered queries, all in one statement. */
  add(qs: readonly Omit<StoredCallbackQuery, 'answeredAt' | 'answer'>[]): Promise<void>;
  get(botId: number, id: string): Promise<StoredCallbackQuery | undefined>;
  /** The latest answered press of button `data` on the message (answerCallbackQuery's cache_time). */
  lastAnswered(botId: number, chatId: number, messageId: number, data: string): Promise<StoredCallbackQuery | undefined>;
  /**
   * Records the bots' answers in one statement, each unless its query is
   * answered already or was made before its `notBefore`; per answer, whether
   * it was recorded (of two answers to one query only the first can be).
   */
  answer(answers: readonly CallbackAnswerWrite[]): Promise<boolean[]>;
  purgeOlderThan(time: number): Promise<number>;
}

export type ProfileField = 'name' | 'description' | 'short_description';

/** A bot's command lists (by scope key and language) and its name and descriptions per language ('' = every other language). */
export interface BotProfileStore {
  getCommands(botId: number, scope: string, languageCode: string): Promise<BotCommand[] | undefined>;
  /** null deletes the list. */
  setCommands(botId: number, scope: string, languageCode: string, commands: BotCommand[] | null): Promise<void>;
  getProfile(botId: number, languageCode: string): Promise<Partial<Record<ProfileField, string>>>;
  /** null removes the language's own value. */
  setProfile(botId: number, languageCode: string, field: ProfileField, value: string | null): Promise<void>;
}

export type FileKind = 'photo' | 'document';

/** A file a bot sent (Bot API File): `fileId` is this bot's handle, `uniqueId` the same for the same bytes. */
export interface StoredFile {
  fileId: string;
  botId: number;
  uniqueId: string;
  /** Where the bytes are in the BlobStore. */
  blobKey: string;
  kind: FileKind;
  size: number;
  mimeType: string | null;
  fileName: string | null;
  width: number | null;
  height: number | null;
  createdAt: number;
}

export interface BotFileStore {
  /**
   * Adds the file's row unless the bot's stored bytes (the sum of its files'
   * sizes) would then exceed `quotaBytes`: false, and nothing added. The
   * check and the insert are one atomic step across concurrent calls and
   * processes (a conditional UPDATE of the bot's usage row).
   */
  add(f: StoredFile, quotaBytes: number): Promise<boolean>;
  get(fileId: string): Promise<StoredFile | undefined>;
  /** Of `blobKeys`, those some file row still names (any bot's). */
  keysInUse(blobKeys: readonly string[]): Promise<Set<string>>;
  /** Lets the people of the chat read the file (it was sent into the chat); idempotent. */
  grant(fileId: string, chatId: number): Promise<void>;
  granted(fileId: string, chatId: number): Promise<boolean>;
}

/** Bytes received and kept aside until a method keeps or the request's end discards them. */
export interface StagedBlob {
  /** The staging area's name for it. */
  id: string;
  /** SHA-256 of the bytes, hex. */
  sha256: string;
  size: number;
}

/**
 * Where file bytes live: a folder beside the SQLite database by default
 * (src/store/bot/files-disk.ts); a store shared by several machines
 * implements the same port. Blobs are addressed by content, so the same
 * bytes are kept once.
 */
export interface BlobStore {
  /** Reads the stream into a staging area; 'too_big' (and nothing kept) past `maxBytes`. */
  stage(source: Readable, maxBytes: number): Promise<StagedBlob | 'too_big'>;
  /** The staged bytes (photos: their header is read). */
  readStaged(staged: StagedBlob): Promise<Buffer>;
  /** Makes the staged bytes permanent; returns their key. */
  keep(staged: StagedBlob): Promise<string>;
  /** Forgets staged bytes (kept ones stay). */
  discard(staged: StagedBlob): Promise<void>;
  /** Removes staged bytes last written before `before` (ms): uploads a crash or a lost connection left. Returns how many. */
  sweepStaging(before: number): Promise<number>;
  /** The kept keys, a batch (up to a few hundred) at a time, with when each was last kept (ms). */
  kept(): AsyncIterable<{ key: string; keptAt: number }[]>;
  /**
   * Removes the kept bytes of `key` unless `inUse()` (asked after they were
   * moved aside, so a `keep` racing with it either sees them gone and keeps
   * them again, or is seen by `inUse`) says a row names them.
   */
  removeUnused(key: string, inUse: () => Promise<boolean>): Promise<boolean>;
  open(key: string): Readable;
  close(): Promise<void>;
}

export interface BotStores {
  bots: BotStore;
  people: PersonStore;
  chats: ChatStore;
  updates: UpdateStore;
  callbacks: CallbackQueryStore;
  profiles: BotProfileStore;
  files: BotFileStore;
  /** The outbox (bot.created commits with the bot). */
  events: Recorder;
}

export type BotStorage = BotStores & Transactional<BotStores>;
