import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { RegistrationStorage } from '../../../src/core/oauth/registration-ports.js';
import type { Client } from '../../../src/core/model.js';
import { T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

const aClient = (id: string): Client => ({
  id, name: 'Registered', secretHash: null, previousSecretHash: null, previousSecretExpiresAt: null, redirectUris: ['https://a.example.test/cb'],
  grantTypes: ['authorization_code'], scope: ['user'], authMethod: 'none', trusted: false, introspect: false, domain: null, tokenFormat: 'jwt',
  postLogoutRedirectUris: [], backchannelLogoutUri: null, resources: ['https://r.example.test/'], createdAt: T,
});

/** Dynamic registration's stores: initial access tokens used up atomically, registrations stored and replaced, and the client's resources kept. */
export function registrationConformance(name: string, factory: StoreFactory<{ registration: RegistrationStorage }>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: dynamic registration (${name})`, { skip }, () => {
    let storage: RegistrationStorage;
    let close: () => Promise<void>;
    before(async () => {
      const opened = await factory();
      storage = opened.stores.registration;
      close = opened.close;
    });
    after(() => close());

    it('an initial access token gives exactly its uses, however many take at once, and nothing once expired', async () => {
      const tokenHash = randomUUID();
      await storage.initialTokens.create({ tokenHash, uses: 3, createdAt: T, expiresAt: T + 60_000 });
      assert.equal((await storage.initialTokens.get(tokenHash, T))?.uses, 3);
      const taken = await Promise.all(Array.from({ length: 10 }, () => storage.initialTokens.take(tokenHash, T)));
      assert.equal(taken.filter(Boolean).length, 3);
      assert.equal(await storage.initialTokens.get(tokenHash, T), undefined, 'used up');
      const later = randomUUID();
      await storage.initialTokens.create({ tokenHash: later, uses: 1, createdAt: T, expiresAt: T + 60_000 });
      assert.equal(await storage.initialTokens.take(later, T + 60_000), false, 'expired');
      assert.equal(await storage.initialTokens.take(randomUUID(), T), false, 'unknown');
    });

    it('a take inside a transaction that rolls back gives the use back', async () => {
      const tokenHash = randomUUID();
      await storage.initialTokens.create({ tokenHash, uses: 1, createdAt: T, expiresAt: T + 60_000 });
      await assert.rejects(storage.transaction(async (tx) => {
        assert.equal(await tx.initialTokens.take(tokenHash, T), true);
        throw new Error('rolled back');
      }));
      assert.equal(await storage.initialTokens.take(tokenHash, T), true);
    });

    it('registrations are saved with the client in one transaction, replaced, and deleted; resources round-trip', async () => {
      const id = randomUUID();
      await storage.transaction(async (tx) => {
        await tx.clients.create(aClient(id));
        await tx.registrations.save({ clientId: id, tokenHash: 'h1', metadata: { contacts: ['a@example.test'] }, createdAt: T });
      });
      assert.deepEqual((await storage.clients.get(id))?.resources, ['https://r.example.test/']);
      assert.deepEqual(await storage.registrations.get(id), { clientId: id, tokenHash: 'h1', metadata: { contacts: ['a@example.test'] }, createdAt: T });
      await storage.registrations.save({ clientId: id, tokenHash: 'h2', metadata: {}, createdAt: T });
      assert.equal((await storage.registrations.get(id))?.tokenHash, 'h2');
      await storage.registrations.delete(id);
      assert.equal(await storage.registrations.get(id), undefined);
    });
  });
}
