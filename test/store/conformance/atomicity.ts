import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Storage } from '../../../src/core/ports.js';
import type { DbKind } from '../../helpers/db.js';
import { aCode, aFamily, aRefresh, T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

const N = 20;

/** N calls started together, spread round-robin over the given storages. */
const race = <R>(storages: Storage[], call: (s: Storage, i: number) => Promise<R>) =>
  Promise.all(Array.from({ length: N }, (_, i) => call(storages[i % storages.length]!, i)));

const winners = (results: ({ replay: boolean } | { reuse: boolean } | undefined)[]) =>
  results.filter((r) => r && !('replay' in r ? r.replay : r.reuse)).length;

/** Two storages on one database, standing for two Gatehouse processes. */
export interface TwoProcesses {
  kind: DbKind;
  one: Storage;
  other: Storage;
}

/**
 * Single-use credentials must be burnt by the database, not by the process:
 * two storages (two SQLite connections on one file, two PostgreSQL pools on
 * one schema) stand for two Gatehouse processes behind one address.
 */
export function atomicityConformance(name: string, factory: StoreFactory<TwoProcesses>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: atomicity under concurrency (${name})`, { skip }, () => {
    let one: Storage;
    let other: Storage;
    let kind: DbKind;
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: { one, other, kind }, close } = await factory());
    });
    after(() => close());

    for (const [label, pick] of [['one storage', () => [one]], ['two storages', () => [one, other]]] as const) {
      it(`burns an authorization code exactly once across ${N} concurrent consumes (${label})`, async () => {
        const code = aCode();
        await one.codes.save(code);
        const results = await race(pick(), (s, i) => s.codes.consume(code.codeHash, code.clientId, T + i));
        assert.equal(winners(results), 1);
        assert.equal(results.filter((r) => r?.replay === true).length, N - 1);
        // Every caller sees the one burn time the winner wrote.
        assert.equal(new Set(results.map((r) => r?.code.consumedAt)).size, 1);
      });

      it(`a code raced by its own client and another: the other neither burns it nor sees a replay (${label})`, async () => {
        const code = aCode();
        await one.codes.save(code);
        const results = await race(pick(), (s, i) => s.codes.consume(code.codeHash, i % 4 === 0 ? code.clientId : 'another-client', T + i));
        const own = results.filter((_, i) => i % 4 === 0);
        assert.equal(winners(own), 1);
        assert.equal(own.filter((r) => r?.replay === true).length, own.length - 1);
        assert.ok(results.filter((_, i) => i % 4 !== 0).every((r) => r === undefined));
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
