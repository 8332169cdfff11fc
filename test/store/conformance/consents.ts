import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Stores } from '../../../src/core/ports.js';
import { T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

const sorted = (a: string[] | undefined) => [...(a ?? [])].sort();

/** ConsentStore: grants are a union per user and client, listed newest first. */
export function consentsConformance(name: string, factory: StoreFactory<Pick<Stores, 'consents'>>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: consents (${name})`, { skip }, () => {
    let storage: Pick<Stores, 'consents'>;
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
    });
    after(() => close());

    describe('ConsentStore', () => {
      it('grants add to what was granted before (a union), keeping the first grant time', async () => {
        const [user, client] = [randomUUID(), randomUUID()];
        assert.equal(await storage.consents.get(user, client), undefined);
        const first = await storage.consents.grant(user, client, ['user', 'read'], T);
        assert.deepEqual(first, { userId: user, clientId: client, scope: ['user', 'read'], createdAt: T, updatedAt: T });
        const second = await storage.consents.grant(user, client, ['read', 'chat'], T + 5);
        assert.deepEqual(sorted(second.scope), ['chat', 'read', 'user']);
        assert.equal(second.createdAt, T);
        assert.equal(second.updatedAt, T + 5);
        assert.deepEqual(await storage.consents.get(user, client), second);
        const third = await storage.consents.grant(user, client, [], T + 9);
        assert.deepEqual(sorted(third.scope), ['chat', 'read', 'user']);
      });

      it('keeps every scope when grants for one user and client race', async () => {
        const [user, client] = [randomUUID(), randomUUID()];
        const scopes = Array.from({ length: 8 }, (_, i) => `s${i}`);
        await Promise.all(scopes.map((s, i) => storage.consents.grant(user, client, [s], T + i)));
        assert.deepEqual(sorted((await storage.consents.get(user, client))?.scope), scopes);
      });

      it('revokes a consent once', async () => {
        const [user, client] = [randomUUID(), randomUUID()];
        await storage.consents.grant(user, client, ['user'], T);
        assert.equal(await storage.consents.revoke(user, client), true);
        assert.equal(await storage.consents.get(user, client), undefined);
        assert.equal(await storage.consents.revoke(user, client), false);
      });

      it("lists one user's consents, most recently updated first", async () => {
        const [user, other] = [randomUUID(), randomUUID()];
        const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
        await storage.consents.grant(user, a, ['user'], T + 1);
        await storage.consents.grant(user, b, ['user'], T + 2);
        await storage.consents.grant(user, c, ['user'], T + 3);
        await storage.consents.grant(other, a, ['user'], T + 4);
        await storage.consents.grant(user, a, ['read'], T + 5);
        assert.deepEqual((await storage.consents.listForUser(user)).map((x) => x.clientId), [a, c, b]);
        assert.deepEqual(await storage.consents.listForUser(randomUUID()), []);
      });
    });
  });
}
