import type { Wakeups } from '../bot/wakeups.js';

/** How often a waiting page re-reads storage for a press another process handled. */
const RECHECK_MS = 250;

/**
 * The long poll of a page waiting for a tap in chat (the second step of a
 * sign-in, a password reset by chat): resolves with the approval's state
 * once it leaves `waiting`, at `deadline`, or when the request is aborted.
 * Woken at once by a press in this process (the wake-up `topic`), and
 * re-reading `state()` every RECHECK_MS for a press another process handled.
 */
export async function waitForTap(wakeups: Wakeups, topic: string, state: () => Promise<string>, deadline: number, signal: AbortSignal): Promise<string> {
  let wake: (() => void) | undefined;
  const off = wakeups.subscribe(topic, () => wake?.());
  const abort = () => wake?.();
  signal.addEventListener('abort', abort, { once: true });
  try {
    for (;;) {
      const now = await state();
      if (now !== 'waiting' || signal.aborted || Date.now() >= deadline) return now;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(RECHECK_MS, Math.max(0, deadline - Date.now())));
        wake = () => (clearTimeout(t), resolve());
      });
    }
  } finally {
    signal.removeEventListener('abort', abort);
    off();
  }
}
