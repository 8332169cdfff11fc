import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { SqlStorage } from '../../../src/store/index.js';
import { databaseKinds } from '../../helpers/db.js';
import { aSession, freshStorage, T } from '../fixtures.js';

const sorted = (a: string[] | undefined) => [...(a ?? [])].sort();

for (const { kind, skip } of await databaseKinds()) {
  describe(`storage conformance: consents and sessions (${kind})`, { skip }, () => {
    let storage: SqlStorage;
    let close: () => Promise<void>;
    before(async () => {
      ({ storage, close } = await freshStorage(kind));
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

    describe('SessionStore', () => {
      it('returns a session until it expires', async () => {
        const s = aSession();
        await storage.sessions.create(s);
        assert.deepEqual(await storage.sessions.get(s.idHash, T), s);
        assert.deepEqual(await storage.sessions.get(s.idHash, s.expiresAt - 1), s);
        assert.equal(await storage.sessions.get(s.idHash, s.expiresAt), undefined);
        assert.equal(await storage.sessions.get('no-such-session', T), undefined);
      });

      it('deletes one session, or every session of a user', async () => {
        const user = randomUUID();
        const [a, b, c] = [aSession({ userId: user }), aSession({ userId: user }), aSession({ userId: user })];
        const someoneElse = aSession();
        for (const s of [a, b, c, someoneElse]) await storage.sessions.create(s);
        await storage.sessions.delete(a.idHash);
        assert.equal(await storage.sessions.get(a.idHash, T), undefined);
        assert.deepEqual(await storage.sessions.get(b.idHash, T), b);
        assert.equal(await storage.sessions.deleteForUser(user), 2);
        assert.equal(await storage.sessions.get(c.idHash, T), undefined);
        assert.deepEqual(await storage.sessions.get(someoneElse.idHash, T), someoneElse);
        assert.equal(await storage.sessions.deleteForUser(user), 0);
        await storage.sessions.delete('no-such-session');
      });
    });
  });
}
