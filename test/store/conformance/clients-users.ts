import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Stores } from '../../../src/core/ports.js';
import { UsernameTakenError } from '../../../src/store/index.js';
import { aClient, aUser, hashOf, T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

type ClientsAndUsers = Pick<Stores, 'clients' | 'users'>;

/** ClientStore and UserStore: every field kept, usernames unique whatever the case. */
export function clientsUsersConformance(name: string, factory: StoreFactory<ClientsAndUsers>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: clients and users (${name})`, { skip }, () => {
    let storage: ClientsAndUsers;
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
    });
    after(() => close());

    describe('ClientStore', () => {
      it('stores every field and reads it back unchanged', async () => {
        const confidential = aClient({
          previousSecretHash: hashOf('old'), previousSecretExpiresAt: T + 5_000, trusted: true, introspect: true,
          domain: 'app.example.test', tokenFormat: 'opaque', grantTypes: ['client_credentials', 'urn:example:grant'],
          redirectUris: ['https://app.example.test/a', 'https://app.example.test/b?x=1'], authMethod: 'client_secret_post',
        });
        const pub = aClient({ secretHash: null, authMethod: 'none', scope: [], redirectUris: [], grantTypes: ['implicit'] });
        await storage.clients.create(confidential);
        await storage.clients.create(pub);
        assert.deepEqual(await storage.clients.get(confidential.id), confidential);
        assert.deepEqual(await storage.clients.get(pub.id), pub);
        assert.equal(await storage.clients.get('no-such-client'), undefined);
      });

      it('refuses a second client with the same id', async () => {
        const c = aClient();
        await storage.clients.create(c);
        await assert.rejects(storage.clients.create(aClient({ id: c.id })));
      });

      it('lists clients oldest first', async () => {
        const newer = aClient({ createdAt: T + 20 });
        const older = aClient({ createdAt: T + 10 });
        await storage.clients.create(newer);
        await storage.clients.create(older);
        const mine = (await storage.clients.list()).filter((c) => c.id === newer.id || c.id === older.id);
        assert.deepEqual(mine, [older, newer]);
      });

      it('updates only the fields in the patch', async () => {
        const c = aClient({ domain: 'app.example.test' });
        await storage.clients.create(c);
        const patch = { name: 'Renamed', secretHash: hashOf('new'), previousSecretHash: c.secretHash, previousSecretExpiresAt: T + 1, domain: null, trusted: true, scope: ['user'] };
        assert.equal(await storage.clients.update(c.id, patch), true);
        assert.deepEqual(await storage.clients.get(c.id), { ...c, ...patch });
        assert.equal(await storage.clients.update('no-such-client', { name: 'x' }), false);
      });

      it('deletes a client once', async () => {
        const c = aClient();
        await storage.clients.create(c);
        assert.equal(await storage.clients.delete(c.id), true);
        assert.equal(await storage.clients.get(c.id), undefined);
        assert.equal(await storage.clients.delete(c.id), false);
      });
    });

    describe('UserStore', () => {
      it('stores a user and reads it back by id', async () => {
        const u = aUser({ name: 'Ada Lovelace' });
        await storage.users.create(u);
        assert.deepEqual(await storage.users.get(u.id), u);
        assert.equal(await storage.users.get('no-such-user'), undefined);
      });

      it('finds a user by username whatever the case, keeping the spelling it was created with', async () => {
        const u = aUser({ username: 'Grace.Hopper' });
        await storage.users.create(u);
        assert.deepEqual(await storage.users.findByUsername('grace.hopper'), u);
        assert.deepEqual(await storage.users.findByUsername('GRACE.HOPPER'), u);
        assert.deepEqual(await storage.users.findByUsername('Grace.Hopper'), u);
        assert.equal(await storage.users.findByUsername('grace'), undefined);
      });

      it('refuses a taken username regardless of case with UsernameTakenError', async () => {
        const u = aUser({ username: 'Linus' });
        await storage.users.create(u);
        for (const username of ['Linus', 'linus', 'LINUS']) {
          await assert.rejects(storage.users.create(aUser({ username })), UsernameTakenError);
        }
        assert.deepEqual(await storage.users.findByUsername('linus'), u);
      });

      // An account lock (src/core/account-lock.ts): an unlock clears the lock but keeps tokensValidAfter.
      it('setLocked: a lock sets lockedAt and tokensValidAfter, an unlock clears only lockedAt, a later lock moves both', async () => {
        const u = aUser();
        const other = aUser();
        await storage.users.create(u);
        await storage.users.create(other);
        assert.equal(await storage.users.setLocked(u.id, T + 10), true);
        assert.deepEqual(await storage.users.get(u.id), { ...u, lockedAt: T + 10, tokensValidAfter: T + 10 });
        assert.deepEqual(await storage.users.findByUsername(u.username), { ...u, lockedAt: T + 10, tokensValidAfter: T + 10 });
        assert.equal(await storage.users.setLocked(u.id, null), true);
        assert.deepEqual(await storage.users.get(u.id), { ...u, lockedAt: null, tokensValidAfter: T + 10 });
        assert.equal(await storage.users.setLocked(u.id, T + 20), true);
        assert.deepEqual(await storage.users.get(u.id), { ...u, lockedAt: T + 20, tokensValidAfter: T + 20 });
        assert.deepEqual(await storage.users.get(other.id), other, 'another account is untouched');
        assert.equal(await storage.users.setLocked('no-such-user', T), false);
        assert.equal(await storage.users.setLocked('no-such-user', null), false);
      });
    });
  });
}
