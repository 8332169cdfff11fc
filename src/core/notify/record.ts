import { EVENT_CATALOGUE, newEvent, type EventPayloads, type EventType } from './events.js';
import type { EventStore } from './ports.js';

/** What recording needs of the outbox (any transaction's `events`). */
export type Recorder = Pick<EventStore, 'append' | 'hasSubscriber'>;

const RECORDED = Promise.resolve();

/**
 * Records an event through `stores`: pass the transaction's stores so the
 * event commits or rolls back with the change that caused it. Gated kinds
 * (`token.issued`) cost one in-memory lookup when nobody subscribes (on a
 * process that has not issued one for a while, one read). Not an async
 * function: on the token path the lookup answers from memory, and the
 * append's own promise is returned as it is.
 */
export function recordEvent<T extends EventType>(stores: { events: Recorder }, type: T, data: EventPayloads[T], now: number): Promise<void> {
  const events = stores.events;
  if (!EVENT_CATALOGUE[type].gated) return events.append(newEvent(type, data, now));
  const subscribed = events.hasSubscriber(type);
  if (subscribed === true) return events.append(newEvent(type, data, now));
  if (subscribed === false) return RECORDED;
  return subscribed.then((yes) => (yes ? events.append(newEvent(type, data, now)) : undefined));
}

/**
 * `work()` (the token path's signature, on the thread pool) run while the
 * event commits, its value given once `recorded` has settled too: the answer
 * still waits for the commit, but no longer for the commit and then the
 * signature. Both are awaited at once, so a failed record is never left
 * unhandled while `work` runs, even if it throws.
 */
export function whileRecording<T>(recorded: Promise<void>, work: () => Promise<T>): Promise<T> {
  if (recorded === RECORDED) return work();
  let value: Promise<T>;
  try {
    value = work();
  } catch (err) {
    value = Promise.reject(err);
  }
  return Promise.all([value, recorded]).then(first);
}

const first = <T>(r: [T, void]): T => r[0];

/** Whether recording `type` would write anything (lets a caller skip opening a transaction). */
export async function wouldRecord(stores: { events: Recorder }, type: EventType): Promise<boolean> {
  return !EVENT_CATALOGUE[type].gated || (await stores.events.hasSubscriber(type));
}
