import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Storage } from '../../../src/core/ports.js';
import { openStorage } from '../../../src/store/index.js';
import { databaseKinds } from '../../helpers/db.js';
import { aCode, aFamily, aRefresh, sharedDatabaseUrl, T } from '../fixtures.js';

const N = 20;

/** N calls started together, spread round-robin over the given storages. */
const race = <R>(storages: Storage[], call: (s: Storage, i: number) => Promise<R>) =>
  Promise.all(Array.from({ length: N }, (_, i) => call(storages[i % storages.length]!, i)));

const winners = (results: ({ replay: boolean } | { reuse: boolean } | undefined)[]) =>
  results.filter((r) => r && !('replay' in r ? r.replay : r.reuse)).length;

/**
 * Single-use credentials must be burnt by the database, not by the process:
 * two storages (two SQLite connections on one file, two PostgreSQL pools on
 * one schema) stand for two Gatehouse processes behind one address.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`storage conformance: atomicity under concurrency (${kind})`, { skip }, () => {
    let one: Storage;
    let other: Storage;
    let cleanup: () => Promise<void>;
    before(async () => {
      const shared = sharedDatabaseUrl(kind);
      cleanup = shared.cleanup;
      one = await openStorage(shared.url);
      other = await openStorage(shared.url);
    });
    after(async () => {
      await one?.close();
      await other?.close();
      await cleanup();
    });

    for (const [label, pick] of [['one storage', () => [one]], ['two storages', () => [one, other]]] as const) {
      it(`burns an authorization code exactly once across ${N} concurrent consumes (${label})`, async () => {
        const code = aCode();
        await one.codes.save(code);
        const results = await race(pick(), (s, i) => s.codes.consume(code.codeHash, T + i));
        assert.equal(winners(results), 1);
        assert.equal(results.filter((r) => r?.replay === true).length, N - 1);
        // Every caller sees the one burn time the winner wrote.
        assert.equal(new Set(results.map((r) => r?.code.consumedAt)).size, 1);
      });

      it(`rotates a refresh token exactly once across ${N} concurrent calls (${label})`, async () => {
        const family = aFamily();
        await one.tokens.createFamily(family);
        const refresh = aRefresh(family);
        await one.tokens.saveRefresh(refresh);
        const results = await race(pick(), (s, i) => s.tokens.markRotated(refresh.tokenHash, T + i));
        assert.equal(winners(results), 1);
        assert.equal(results.filter((r) => r?.reuse === true).length, N - 1);
      });

      it(`counts exactly ${N} concurrent rate-limit hits on one key (${label})`, async () => {
        const key = `race:${randomUUID()}`;
        const counts = await race(pick(), (s) => s.rateLimits.hit(key, 60_000, T));
        assert.deepEqual([...counts].sort((a, b) => a - b), Array.from({ length: N }, (_, i) => i + 1));
        assert.equal(await other.rateLimits.peek(key, T), N);
      });
    }

    // The refresh grant rotates inside a transaction. SQLite has one writer per
    // file, and one process keeps one connection, so the race there is in-process.
    it(`rotates exactly once when each call runs in its own transaction`, async () => {
      const family = aFamily();
      await one.tokens.createFamily(family);
      const refresh = aRefresh(family);
      await one.tokens.saveRefresh(refresh);
      const storages = kind === 'postgres' ? [one, other] : [one];
      const results = await race(storages, (s, i) => s.transaction((tx) => tx.tokens.markRotated(refresh.tokenHash, T + i)));
      assert.equal(winners(results), 1);
    });
  });
}
