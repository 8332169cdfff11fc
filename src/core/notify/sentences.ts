import type { EventPayloads, EventType } from './events.js';

/**
 * What a person reads in their linked chat for each event about them
 * (docs/events.md, Chat notifications): a sentence in their words, never an
 * id. Every personal event of the catalogue needs one here
 * (test/notify/sentences.test.ts fails otherwise); an event without one
 * would reach the person as its type and fields.
 */
export interface SentenceContext {
  /** When it happened, as the person reads it ("2026-11-28 23:34 UTC"). */
  at: string;
  /** The app's name when the event names it only by client_id (looked up by the worker). */
  clientName?: string | undefined;
  /** The labels of the buttons under the message (src/core/notify/one-tap.ts), so the text can point at them. */
  buttons: string[];
}

type Sentence<T extends EventType> = (d: EventPayloads[T], ctx: SentenceContext) => string;

const SCOPE_WORDS = new Map<string, string>([
  ['openid', 'confirm who you are'],
  ['profile', 'see your name'],
  ['email', 'see your e-mail address'],
  ['user', 'see your profile'],
  ['chat', 'read and send your chat messages'],
  ['offline_access', 'keep access when you are away'],
]);

/** Scopes in plain words ("see your name and see your e-mail address"); unknown ones by name. */
export function scopeWords(scope: readonly string[]): string {
  const words = scope.filter((s) => s !== 'openid').map((s) => SCOPE_WORDS.get(s) ?? `use “${s}”`);
  if (!words.length) return 'confirm who you are';
  return words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} and ${words.at(-1)!}`;
}

const FACTORS: Record<EventPayloads['mfa.enrolled']['factor'], string> = {
  totp: 'an authenticator app',
  passkey: 'a passkey',
  recovery_codes: 'recovery codes',
  chat_approval: 'approval in this chat',
};

const factor = (d: EventPayloads['mfa.enrolled']) =>
  d.factor === 'passkey' && d.passkey_name ? `the passkey “${d.passkey_name}”` : (Object.hasOwn(FACTORS, d.factor) ? FACTORS[d.factor] : 'a second factor');

const app = (name: unknown, ctx: SentenceContext) => `“${typeof name === 'string' && name ? name : ctx.clientName ?? 'an app'}”`;

/** "Not you?" advice that only names what the person can actually do from here. */
function notYou(ctx: SentenceContext, orElse: string): string {
  const lock = ctx.buttons.find((b) => /lock/i.test(b));
  if (lock) return `If this wasn't you, tap “${lock}”.`;
  const out = ctx.buttons.find((b) => /sign out/i.test(b));
  if (out) return `If this wasn't you, tap “${out}” and lock your account.`;
  return orElse;
}

const SENTENCES: { [T in EventType]?: Sentence<T> } = {
  'user.login.succeeded': (d, ctx) =>
    `New sign-in to your account ${d.username} from ${d.ip} on ${ctx.at}.\n${notYou(ctx, "If this wasn't you, lock your account.")}`,
  'user.login.failed': (d, ctx) => `Someone tried to sign in to your account ${d.username} from ${d.ip} on ${ctx.at} with the wrong password.`,
  'user.locked': (d, ctx) => {
    switch (d.locked_by) {
      case 'account':
        return `Sign-in to your account ${d.username} is paused for a while after too many wrong passwords (the last from ${d.ip}, ${ctx.at}).`;
      case 'address':
        return `Sign-in from ${d.ip} is paused for a while after too many wrong passwords for ${d.username} (${ctx.at}).`;
      case 'not_me':
        return `Your account ${d.username} is locked: you answered “Not me” to a sign-in from ${d.ip} on ${ctx.at}. Nobody can sign in until an administrator unlocks it.`;
      case 'one_tap':
        return `Your account ${d.username} is locked and signed out everywhere, as you asked from this chat (${ctx.at}). An administrator can unlock it.`;
      default:
        return `Your account ${d.username} was locked by an administrator on ${ctx.at}. Nobody can sign in with it until it is unlocked.`;
    }
  },
  'user.unlocked': (d, ctx) =>
    d.unlocked_by === 'password_reset'
      ? `Your account ${d.username} is unlocked: its password was reset on ${ctx.at}.`
      : `Your account ${d.username} was unlocked by an administrator on ${ctx.at}. You can sign in again.`,
  'user.email_verified': (d, ctx) =>
    `The e-mail address ${d.email} of your account ${d.username} was confirmed on ${ctx.at}${d.ip ? ` from ${d.ip}` : ''}.\nIf this wasn't you, lock your account and tell an administrator.`,
  'user.password_changed': (d, ctx) =>
    `The password of your account ${d.username} was ${d.changed_by === 'reset' ? 'reset' : 'changed'}${d.changed_by === 'admin' || d.changed_by === 'api' || d.changed_by === 'cli' ? ' by an administrator' : ''} on ${ctx.at}${d.ip ? ` from ${d.ip}` : ''}. Every session was signed out.\n${notYou(ctx, "If this wasn't you, lock your account and ask an administrator.")}`,
  'user.updated': (d, ctx) =>
    `${d.updated_by === 'self' ? 'You changed' : 'An administrator changed'} the ${d.fields.map((f) => (f === 'email' ? 'e-mail address' : 'name')).join(' and ')} of your account ${d.username} on ${ctx.at}.`,
  'mfa.enrolled': (d, ctx) =>
    `You added ${factor(d)} as a second factor on ${ctx.at}.\nIf this wasn't you, lock your account and tell an administrator.`,
  'mfa.removed': (d, ctx) =>
    `${factor(d).replace(/^./, (c) => c.toUpperCase())} is no longer a second factor of your account (${ctx.at}).\nIf this wasn't you, lock your account and tell an administrator.`,
  'signin.approval.requested': (d, ctx) => `A sign-in from ${d.browser} (${d.ip}) waits for approval in chat (${ctx.at}).`,
  'signin.approval.approved': (d, ctx) => `You approved a sign-in from ${d.ip} in chat (${ctx.at}).`,
  'signin.approval.denied': (d, ctx) =>
    `A sign-in from ${d.ip} was not approved (${d.reason === 'not_me' ? 'you answered “Not me”' : d.reason === 'wrong_number' ? 'the wrong number was tapped' : 'nobody answered in time'}, ${ctx.at}).`,
  'consent.granted': (d, ctx) => `You granted ${app(d.client_name, ctx)} access to your account: it may ${scopeWords(d.scope)} (${ctx.at}).`,
  'consent.denied': (d, ctx) => `You refused ${app(d.client_name, ctx)} access to your account (${ctx.at}).`,
  'device.approved': (d, ctx) => `You signed in a device to ${app(d.client_name, ctx)}: it may ${scopeWords(d.scope)} (${ctx.at}).`,
  'device.denied': (d, ctx) => `You refused a device's sign-in to ${app(d.client_name, ctx)} (${ctx.at}).`,
  'ciba.approved': (d, ctx) =>
    `You allowed ${app(d.client_name, ctx)} to ${scopeWords(d.scope)}${d.binding_message ? ` for “${d.binding_message}”` : ''} (${ctx.at}).`,
  'ciba.denied': (d, ctx) => `You refused ${app(d.client_name, ctx)}${d.binding_message ? ` for “${d.binding_message}”` : ''} (${ctx.at}).`,
  'refresh_token.reuse_detected': (_d, ctx) =>
    `Warning: your sign-in to ${app(undefined, ctx)} was replayed from somewhere else (an old token came back) on ${ctx.at}. Gatehouse signed that app out to protect your account.\n${notYou(ctx, 'If you did not expect this, lock your account.')}`,
  'authorization_code.reuse_detected': (_d, ctx) =>
    `Warning: a sign-in to ${app(undefined, ctx)} was replayed on ${ctx.at}. Gatehouse cancelled what it had granted.\n${notYou(ctx, 'If you did not expect this, lock your account.')}`,
  'role.requested': (d, ctx) => `A request for the role ${d.role} (${d.minutes} minutes) waits for ${d.approvals_required} approval(s): “${d.reason}” (${ctx.at}).`,
  'role.granted': (d, ctx) => `The role ${d.role} is granted until ${d.until.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC')}, approved by ${d.approved_by} (${ctx.at}).`,
  'role.denied': (d, ctx) => `The request for the role ${d.role} was denied by ${d.denied_by} (${ctx.at}).`,
  'role.expired': (d, ctx) =>
    d.was === 'granted' ? `The role ${d.role} has ended (${ctx.at}).` : `The request for the role ${d.role} lapsed: nobody decided in time (${ctx.at}).`,
  // Operators' chats (an endpoint of kind chat), not a person's.
  'webhook.disabled': (d, ctx) => `Notification endpoint ${d.endpoint_id} (${d.url ?? d.chat_id ?? ''}) was disabled on ${ctx.at}: ${d.reason}.`,
};

/** The sentence for an event, or undefined when its type has none. */
export function sentenceFor(type: string, data: Record<string, unknown>, ctx: SentenceContext): string | undefined {
  if (!Object.hasOwn(SENTENCES, type)) return undefined;
  const say = SENTENCES[type as EventType] as Sentence<EventType> | undefined;
  return say?.(data as unknown as EventPayloads[EventType], ctx);
}

export const hasSentence = (type: string): boolean => Object.hasOwn(SENTENCES, type);
