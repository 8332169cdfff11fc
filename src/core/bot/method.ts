import type { ApiMethods } from '@grammyjs/types';
import type { z } from 'zod';
import type { UploadedFile } from './files.js';
import type { BotRecord } from './ports.js';

/** The Bot API as `@grammyjs/types` declares it; an InputFile is a multipart upload (files.ts). */
type Api = ApiMethods<UploadedFile>;
export type MethodName = keyof Api;
export type ApiArgs<M extends MethodName> = Parameters<Api[M]> extends [(infer A)?, ...unknown[]] ? NonNullable<A> : Record<never, never>;
export type ApiResult<M extends MethodName> = ReturnType<Api[M]>;

/**
 * Parameters as a method receives them: a key the Bot API defines for the
 * method carries the Bot API's type (after the lenient coercions of
 * params.ts); other keys are values derived while parsing (the formatted
 * text) or older names clients still send.
 */
export type TypedParams<M extends MethodName, P> = { [K in keyof P]: K extends keyof ApiArgs<M> ? ApiArgs<M>[K] | undefined : P[K] };

/** A result with the optional `description` of the envelope ("Webhook was set"). */
export class Described<T> {
  constructor(readonly result: T, readonly description: string) {}
}

export interface CallContext {
  /** The authenticated bot. */
  bot: BotRecord;
  /** Aborted when the caller goes away or the server stops. */
  signal: AbortSignal;
}

/**
 * One Bot API method: its parameter schema (parsed before it runs, so it
 * sees only the types it declares) and what it does. A method takes the
 * narrow dependencies it uses when its entry is made (methods.ts).
 */
export interface BotMethod<M extends MethodName = MethodName, P = unknown> {
  readonly name: M;
  readonly params: z.ZodType<P>;
  /**
   * The method acts on the bot's row (its webhook, allowed_updates, last
   * error): it runs with the row as stored now, not the one remembered by
   * token (src/store/bot/bots.ts), which another process may have changed.
   * (getUpdates reads the row itself, with the statement that confirms.)
   */
  readonly currentBot?: boolean;
  /**
   * The method takes uploaded files (an InputFile parameter): only then are a
   * multipart request's file parts written anywhere, and only once the token
   * is checked (src/http/bot/multipart.ts, BotApi.admitUpload).
   */
  readonly takesFiles?: true;
  /** The chat a call writes a message into: flood control applies to it (api.ts). */
  writesTo?(params: P): number | string;
  run(call: CallContext, params: P): Promise<ApiResult<M> | Described<ApiResult<M>>>;
}

export function method<M extends MethodName, P extends TypedParams<M, P>>(name: M, spec: Omit<BotMethod<M, P>, 'name'>): BotMethod<M, P> {
  return { name, ...spec };
}

/**
 * The methods served, by lower-case name (Bot API method names are
 * case-insensitive). A Map holds only what was put in it, so a name such as
 * `constructor` or `__proto__` finds nothing.
 */
export class MethodTable {
  private readonly byName = new Map<string, BotMethod>();

  constructor(methods: readonly BotMethod[]) {
    for (const m of methods) this.byName.set(m.name.toLowerCase(), m);
  }

  get(name: string): BotMethod | undefined {
    return this.byName.get(name.toLowerCase());
  }
}

/** Methods a webhook reply may not call (Bot API: "Making requests when getting updates"). */
export const notFromWebhookReply = (name: string) => /^get/i.test(name) || ['setwebhook', 'deletewebhook', 'logout', 'close'].includes(name.toLowerCase());
