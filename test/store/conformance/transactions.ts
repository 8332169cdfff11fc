import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Storage, Stores } from '../../../src/core/ports.js';
import { aClient, aCode, aFamily, aKey, anAccess, aRefresh, aSession, aUser, T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

/** One write to every store, so a rollback has something to undo everywhere. */
function writeEverywhere() {
  const client = aClient();
  const user = aUser();
  const code = aCode({ clientId: client.id, userId: user.id });
  const family = aFamily({ clientId: client.id, userId: user.id });
  const refresh = aRefresh(family);
  const access = anAccess(family);
  const key = aKey();
  const session = aSession({ userId: user.id });
  const limit = `tx:${randomUUID()}`;
  return {
    async write(tx: Stores) {
      await tx.clients.create(client);
      await tx.users.create(user);
      await tx.codes.save(code);
      await tx.tokens.createFamily(family);
      await tx.tokens.saveRefresh(refresh);
      await tx.tokens.saveAccess(access);
      await tx.tokens.revokeJti(refresh.tokenHash, T + 1);
      await tx.consents.grant(user.id, client.id, ['user'], T);
      await tx.keys.add(key);
      await tx.sessions.create(session);
      await tx.rateLimits.hit(limit, 1000, T);
    },
    /** What each store holds afterwards, as plain presence flags. */
    async present(s: Stores) {
      return {
        client: (await s.clients.get(client.id)) !== undefined,
        user: (await s.users.get(user.id)) !== undefined,
        code: (await s.codes.consume(code.codeHash, code.clientId, T)) !== undefined,
        family: (await s.tokens.getFamily(family.id)) !== undefined,
        refresh: (await s.tokens.getRefresh(refresh.tokenHash)) !== undefined,
        access: (await s.tokens.getAccess(access.tokenHash)) !== undefined,
        jti: await s.tokens.isJtiRevoked(refresh.tokenHash),
        consent: (await s.consents.get(user.id, client.id)) !== undefined,
        key: (await s.keys.list()).some((k) => k.kid === key.kid),
        session: (await s.sessions.get(session.idHash, T)) !== undefined,
        limit: (await s.rateLimits.peek(limit, T)) > 0,
      };
    },
  };
}

const all = (value: boolean) =>
  Object.fromEntries(['client', 'user', 'code', 'family', 'refresh', 'access', 'jti', 'consent', 'key', 'session', 'limit'].map((k) => [k, value]));

/** Storage.transaction: every store commits together or rolls back together. */
export function transactionsConformance(name: string, factory: StoreFactory<Storage>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: transactions (${name})`, { skip }, () => {
    let storage: Storage;
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
    });
    after(() => close());

    it('commits every write and returns the callback result', async () => {
      const w = writeEverywhere();
      const result = await storage.transaction(async (tx) => {
        await w.write(tx);
        assert.deepEqual(await w.present(tx), all(true), 'writes are visible inside the transaction');
        return 42;
      });
      assert.equal(result, 42);
      assert.deepEqual(await w.present(storage), all(true));
    });

    it('rolls every write back when the callback throws, and rethrows the same error', async () => {
      const w = writeEverywhere();
      const boom = new Error('boom');
      await assert.rejects(storage.transaction(async (tx) => {
        await w.write(tx);
        throw boom;
      }), (e) => e === boom);
      assert.deepEqual(await w.present(storage), all(false));
    });

    it('rolls back a rotation and a family revocation, so the token can still be used', async () => {
      const family = aFamily();
      await storage.tokens.createFamily(family);
      const refresh = aRefresh(family);
      await storage.tokens.saveRefresh(refresh);
      await assert.rejects(storage.transaction(async (tx) => {
        assert.equal((await tx.tokens.markRotated(refresh.tokenHash, T + 1))?.reuse, false);
        await tx.tokens.revokeFamily(family.id, T + 1);
        throw new Error('issuing failed');
      }));
      assert.deepEqual(await storage.tokens.getRefresh(refresh.tokenHash), refresh);
      assert.deepEqual(await storage.tokens.getFamily(family.id), family);
      assert.equal((await storage.tokens.markRotated(refresh.tokenHash, T + 2))?.reuse, false);
    });

    it('reports the storage ready', async () => {
      assert.equal(await storage.ready(), true);
    });
  });
}
