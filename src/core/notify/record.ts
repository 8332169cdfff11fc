import { EVENT_CATALOGUE, newEvent, type EventPayloads, type EventType } from './events.js';
import type { EventStore } from './ports.js';

/** What recording needs of the outbox (any transaction's `events`). */
export type Recorder = Pick<EventStore, 'append' | 'hasSubscriber'>;

/**
 * Records an event through `stores`: pass the transaction's stores so the
 * event commits or rolls back with the change that caused it. Gated kinds
 * (`token.issued`) cost one in-memory lookup when nobody subscribes (on a
 * process that has not issued one for a while, one read).
 */
export async function recordEvent<T extends EventType>(stores: { events: Recorder }, type: T, data: EventPayloads[T], now: number): Promise<void> {
  if (EVENT_CATALOGUE[type].gated && !(await stores.events.hasSubscriber(type))) return;
  await stores.events.append(newEvent(type, data, now));
}

/** Whether recording `type` would write anything (lets a caller skip opening a transaction). */
export async function wouldRecord(stores: { events: Recorder }, type: EventType): Promise<boolean> {
  return !EVENT_CATALOGUE[type].gated || stores.events.hasSubscriber(type);
}
