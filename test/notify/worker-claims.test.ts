import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newEvent } from '../../src/core/notify/events.js';
import type { AttemptOutcome, ClaimedDelivery, Endpoint, EventStore } from '../../src/core/notify/ports.js';
import { newWebhookSecret } from '../../src/core/notify/signing.js';
import type { Transport } from '../../src/core/notify/transport.js';
import { DeliveryWorker } from '../../src/core/notify/worker.js';

const endpoint: Endpoint = {
  id: 'ep_1', kind: 'webhook', url: 'https://hooks.example.com/', chatId: null, userId: null, eventTypes: ['*'], description: null,
  secret: newWebhookSecret(), previousSecret: null, previousSecretExpiresAt: null, ordered: false, disabledAt: null, disabledReason: null,
  failingSince: null, createdAt: 0, updatedAt: 0,
};

/** An outbox in memory that counts the claims made on it; `queue` commits deliveries and wakes the worker as a commit does. */
function memoryOutbox() {
  const pending: ClaimedDelivery[] = [];
  const listeners = new Set<() => void>();
  const state = { claims: 0, delivered: 0 };
  const deliveries = {
    async claim(_now: number, limit: number): Promise<ClaimedDelivery[]> {
      state.claims++;
      await new Promise((r) => setImmediate(r));
      return pending.splice(0, limit);
    },
    async completeMany(outcomes: AttemptOutcome[]): Promise<void> {
      state.delivered += outcomes.filter((o) => o.next.status === 'delivered').length;
    },
    async renew(): Promise<void> {},
  };
  const events = { deliveries, onAppended: (l: () => void) => (listeners.add(l), () => listeners.delete(l)) } as unknown as EventStore;
  let n = 0;
  const queue = (count: number) => {
    for (let i = 0; i < count; i++) {
      const event = newEvent('client.created', { client_id: `c${n}`, client_name: 'c', grant_types: [], redirect_uris: [], token_endpoint_auth_method: 'none' }, Date.now());
      n++;
      pending.push({ event, endpoint, delivery: { endpointId: endpoint.id, eventId: event.id, status: 'pending', attempts: 0, retryBase: 0, nextAttemptAt: 0, lastStatus: null, lastError: null, createdAt: 0, updatedAt: 0, deliveredAt: null } });
    }
    for (const l of listeners) l();
  };
  return { events, state, queue };
}

/** Answers 204 on the next turn of the event loop. */
const quickReceiver: Transport = { post: () => new Promise((r) => setImmediate(() => r({ status: 204, retryAfter: undefined, excerpt: '', error: null }))) };

const until = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
};

describe('the delivery worker claims in batches (src/core/notify/worker.ts)', () => {
  it('under a steady flow claims about once per commit, not once per finished delivery', async () => {
    const { events, state, queue } = memoryOutbox();
    // No sweep during the test: every claim is the worker's own doing.
    const worker = new DeliveryWorker({ events, clock: { now: () => Date.now() }, webhooks: quickReceiver, chats: quickReceiver, chat: undefined }, { sweepMs: 60_000 });
    worker.start();
    try {
      const commits = 100;
      for (let i = 0; i < commits; i++) {
        queue(5);
        await new Promise((r) => setTimeout(r, 2));
      }
      assert.ok(await until(() => state.delivered === 500, 5000), `${state.delivered} of 500 delivered`);
      assert.ok(state.claims <= 2 * commits + 2, `${state.claims} claims for ${commits} commits`);
    } finally {
      await worker.stop();
    }
  });

  it('drains a backlog larger than its claims without waiting for the sweep', async () => {
    const { events, state, queue } = memoryOutbox();
    const worker = new DeliveryWorker({ events, clock: { now: () => Date.now() }, webhooks: quickReceiver, chats: quickReceiver, chat: undefined }, { sweepMs: 60_000, concurrency: 8 });
    queue(1000);
    worker.start();
    try {
      assert.ok(await until(() => state.delivered === 1000, 5000), `${state.delivered} of 1000 delivered`);
      // Then nothing is due: a commit alone starts the next claim.
      const claims = state.claims;
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(state.claims, claims, 'no claim while nothing was signalled');
      queue(3);
      assert.ok(await until(() => state.delivered === 1003, 2000), 'delivered after the commit');
    } finally {
      await worker.stop();
    }
  });
});
