import { sha256 } from '../crypto.js';
import type { ThrottlePolicy } from '../throttle.js';
import { notFound, tooManyRequests, unauthorized } from './errors.js';
import type { FloodGate } from './flood.js';
import type { BotMethod, CallContext, MethodTable } from './method.js';
import { parseParams, type BotParams } from './params.js';
import type { BotRecord, BotStore } from './ports.js';
import { hashBotToken, tokenBotId } from './token.js';

/**
 * Counts failed bot tokens per bot id and per address, atomically across
 * processes (src/core/throttle.ts). `allowed: false` once either count is
 * over its limit in the window.
 */
export interface TokenThrottle {
  failed(id: string, address: string): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
}

/**
 * Wrong bot tokens per bot id and per address in a fixed window. Higher than
 * for passwords: nothing is guessable, and a bot restarted with a revoked
 * token retries a few times before its owner notices.
 */
export const BOT_TOKEN_POLICY: ThrottlePolicy = { kind: 'bot', perCredential: 10, perAddress: 30, windowMs: 5 * 60_000 };

export interface BotApiDeps {
  methods: MethodTable;
  bots: Pick<BotStore, 'findByTokenHash' | 'get'>;
  flood: FloodGate;
  throttle: TokenThrottle;
  /** Aborted at shutdown, so pending long polls answer at once. */
  shutdown: AbortSignal;
}

/**
 * How a call arrived: the caller's address (throttling) and its lifetime,
 * or what makes it: made only for a method that reads it (a long poll), not
 * on every call.
 */
export interface CallOrigin {
  address: string;
  signal?: AbortSignal | (() => AbortSignal);
}

/** Runs one method whose parameters are parsed. */
type Invoke = (call: CallContext, entry: BotMethod, params: unknown) => Promise<unknown>;

const run: Invoke = (call, entry, params) => entry.run(call, params);

/** The call's context; its signal (the caller's and the server's, combined) is made on first use. */
function callContext(bot: BotRecord, shutdown: AbortSignal, signal: CallOrigin['signal']): CallContext {
  let combined: AbortSignal | undefined;
  return {
    bot,
    get signal() {
      return (combined ??= signal ? AbortSignal.any([typeof signal === 'function' ? signal() : signal, shutdown]) : shutdown);
    },
  };
}

/**
 * Flood control as Telegram applies it to bots (flood.ts), for methods that
 * write into a chat. A call refused later (no such chat, no such message to
 * reply to) gives its message back, so only messages sent are counted.
 */
function floodControlled(next: Invoke, flood: FloodGate): Invoke {
  return async (call, entry, params) => {
    const chat = entry.writesTo?.(params);
    if (chat === undefined) return next(call, entry, params);
    const retryAfter = await flood.take(call.bot.id, chat);
    if (retryAfter) throw tooManyRequests(retryAfter);
    try {
      return await next(call, entry, params);
    } catch (e) {
      flood.giveBack(call.bot.id, chat);
      throw e;
    }
  };
}

/**
 * The id a token names: the part before ':'. Anything but digits is hashed,
 * since it keys a stored counter (no NUL or other bytes a database refuses).
 */
function presentedId(token: string): string {
  const id = token.split(':', 1)[0]!;
  return /^\d{1,20}$/.test(id) ? id : `x${sha256(id).slice(0, 32)}`;
}

/**
 * The Bot API's one entry point: `/bot<token>/<method>` is authenticated,
 * then looked up in the method table, its parameters parsed by the entry's
 * schema, then flood control, then the method. A method named in a
 * webhook's reply enters after authentication (`callAs`).
 */
export class BotApi {
  private readonly invoke: Invoke;

  constructor(private readonly deps: BotApiDeps) {
    this.invoke = floodControlled(run, deps.flood);
  }

  /** A method's result, or a Described one (the envelope's `description`). */
  async call(token: string, method: string, params: BotParams, origin: CallOrigin): Promise<unknown> {
    return this.callAs(await this.authenticate(token, origin.address), method, params, origin.signal);
  }

  /**
   * Before a multipart body is read (src/http/bot/multipart.ts): the token,
   * with the same check and wrong-token throttle as every call, then the
   * method. A wrong token or an unknown method is refused before a byte of
   * the body is written anywhere; file parts are written only for a method
   * that takes files (`takesFiles`), and dropped unread otherwise.
   */
  async admitUpload(token: string, method: string, address: string): Promise<{ bot: BotRecord; takesFiles: boolean }> {
    const bot = await this.authenticate(token, address);
    const entry = this.deps.methods.get(method);
    if (!entry) throw notFound('method not found');
    return { bot, takesFiles: entry.takesFiles === true };
  }

  /** A method call by an authenticated bot. */
  async callAs(bot: BotRecord, method: string, raw: BotParams, signal?: CallOrigin['signal']): Promise<unknown> {
    const entry = this.deps.methods.get(method);
    if (!entry) throw notFound('method not found');
    const params = parseParams(entry.params, raw);
    if (entry.currentBot) bot = await this.current(bot);
    return this.invoke(callContext(bot, this.deps.shutdown, signal), entry, params);
  }

  /** The bot's row as stored now; 401 when its token changed or it was deleted since it was remembered. */
  private async current(bot: BotRecord): Promise<BotRecord> {
    const now = await this.deps.bots.get(bot.id);
    if (!now || now.tokenHash !== bot.tokenHash) throw unauthorized();
    return now;
  }

  /**
   * 401 Unauthorized for anything but a current token of an existing bot.
   * Wrong tokens are counted per bot id and per address; over either limit
   * they are answered 429 (RFC 6819 §5.1.4.2.3). A right token is always
   * served: bot ids are public (every message shows them), so a lock that
   * refused the right token would let anyone take any bot offline, and a
   * token's 210 random bits leave nothing to guess. Nothing is counted on
   * success, so calls with a right token cost no extra round trip.
   */
  async authenticate(token: string, address: string): Promise<BotRecord> {
    const botId = tokenBotId(token);
    const bot = botId === undefined ? undefined : await this.deps.bots.findByTokenHash(hashBotToken(token));
    if (bot && bot.id === botId) return bot;
    const verdict = await this.deps.throttle.failed(presentedId(token), address);
    if (!verdict.allowed) throw tooManyRequests(verdict.retryAfterSeconds);
    throw unauthorized();
  }
}
