import { createRequire } from 'node:module';

/**
 * The one password check (NIST SP 800-63B §3.1.1.2, "memorized secrets"): at
 * least 8 characters, each Unicode code point counting as one; long
 * passphrases allowed (up to 1024, the bound every password field of ours
 * takes); no composition rules; refused when it is on a blocklist of common,
 * expected or breached passwords, or is the account's own name or address.
 * Used by sign-up, and to be used by every later change or reset of a password.
 */
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

export type PasswordVerdict = { ok: true } | { ok: false; reason: 'too_short' | 'too_long' | 'common' | 'like_account'; message: string };

/**
 * popular-passwords (MIT): 41,622 passwords and words of at least 8
 * characters from zxcvbn's frequency lists (leaked password corpora and
 * common words), lower case. Read once, on first use.
 */
let blocklist: ReadonlySet<string> | undefined;
function blocked(): ReadonlySet<string> {
  blocklist ??= new Set((createRequire(import.meta.url)('popular-passwords') as string[]).map((p) => p.toLowerCase()));
  return blocklist;
}

export function checkPassword(password: string, account: { username?: string; email?: string } = {}): PasswordVerdict {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return { ok: false, reason: 'too_short', message: `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.` };
  if (length > MAX_PASSWORD_LENGTH) return { ok: false, reason: 'too_long', message: `Choose a password of at most ${MAX_PASSWORD_LENGTH} characters.` };
  const lower = password.toLowerCase();
  if (blocked().has(lower)) {
    return { ok: false, reason: 'common', message: 'This password is too common: it is on a list of passwords attackers try first. Choose another one.' };
  }
  // §3.1.1.2: context-specific words, such as the username.
  const own = [account.username, account.email, account.email?.split('@')[0]].filter((v): v is string => Boolean(v && v.length >= 3));
  if (own.some((v) => lower === v.toLowerCase())) {
    return { ok: false, reason: 'like_account', message: 'Your password must not be your username or e-mail address. Choose another one.' };
  }
  return { ok: true };
}
