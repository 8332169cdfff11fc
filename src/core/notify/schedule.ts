/**
 * When to try again (Standard Webhooks' suggestion): immediately, then 5 s,
 * 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h after each failure, with
 * ±10 % jitter so a recovering receiver is not hit by every retry at once.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
export const RETRY_DELAYS_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR];
/** The first try plus one per delay; after the last failure the message is dead-lettered. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** An endpoint failing without a single success for this long is disabled (Svix: 5 days). */
export const DISABLE_AFTER_MS = 5 * 24 * HOUR;
export const JITTER = 0.1;

/**
 * The time of the next try after failed attempt number `attempt` (1-based),
 * or undefined when the schedule is exhausted. A `Retry-After` asking for
 * more time is honoured, up to a day.
 */
export function nextAttemptAt(attempt: number, now: number, random: () => number, retryAfterMs?: number): number | undefined {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * random()));
  const wait = retryAfterMs !== undefined ? Math.min(Math.max(jittered, retryAfterMs), 24 * HOUR) : jittered;
  return now + wait;
}
