import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Stores, Transactional } from '../../../src/core/ports.js';
import type { SqlTokenStore } from '../../../src/store/tokens.js';
import { aCode, aFamily, anAccess, aRefresh, DAY, MINUTE, T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

/** With the transaction port: a lock's revocations join the caller's transaction (src/core/account-lock.ts). */
type CodesAndTokens = Pick<Stores, 'codes' | 'tokens'> & Transactional<Pick<Stores, 'codes' | 'tokens'>>;

/** CodeStore and TokenStore: single-use codes, refresh rotation, revocation, purging. */
export function codesTokensConformance(name: string, factory: StoreFactory<CodesAndTokens>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: codes and tokens (${name})`, { skip }, () => {
    let storage: CodesAndTokens;
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
    });
    after(() => close());

    describe('CodeStore', () => {
      it('burns a code once; later calls see it as a replay with the first burn time', async () => {
        const code = aCode({ nonce: 'n-0S6', redirectUri: null });
        await storage.codes.save(code);
        assert.deepEqual(await storage.codes.consume(code.codeHash, code.clientId, T + 1), { code: { ...code, consumedAt: T + 1 }, replay: false });
        assert.deepEqual(await storage.codes.consume(code.codeHash, code.clientId, T + 2), { code: { ...code, consumedAt: T + 1 }, replay: true });
      });

      // Guards the `client_id` condition of `SqlCodeStore.consume` (RFC 6749 §4.1.3): another
      // client's attempt burnt the code, so anyone holding a public client's code could deny it.
      it('leaves a code of another client unburnt, and reports no replay to that client', async () => {
        const code = aCode();
        await storage.codes.save(code);
        assert.equal(await storage.codes.consume(code.codeHash, 'another-client', T + 1), undefined);
        assert.deepEqual(await storage.codes.consume(code.codeHash, code.clientId, T + 2), { code: { ...code, consumedAt: T + 2 }, replay: false });
        assert.equal(await storage.codes.consume(code.codeHash, 'another-client', T + 3), undefined);
        assert.equal((await storage.codes.consume(code.codeHash, code.clientId, T + 4))?.replay, true);
      });

      // An account lock (src/core/account-lock.ts): codes not yet exchanged go; used ones stay for replay detection.
      it("deleteUnusedForUser deletes the user's unused codes only", async () => {
        const userId = `u-${randomUUID()}`;
        const unused = [aCode({ userId }), aCode({ userId, expiresAt: T - MINUTE })];
        const used = aCode({ userId, consumedAt: T });
        const someoneElse = aCode();
        for (const c of [...unused, used, someoneElse]) await storage.codes.save(c);
        assert.equal(await storage.codes.deleteUnusedForUser(userId), 2);
        for (const c of unused) assert.equal(await storage.codes.consume(c.codeHash, c.clientId, T + 1), undefined);
        assert.equal((await storage.codes.consume(used.codeHash, used.clientId, T + 1))?.replay, true, 'a used code is kept: a replay still revokes what it issued');
        assert.equal((await storage.codes.consume(someoneElse.codeHash, someoneElse.clientId, T + 1))?.replay, false);
        assert.equal(await storage.codes.deleteUnusedForUser(userId), 0);
        assert.equal(await storage.codes.deleteUnusedForUser('no-such-user'), 0);
      });

      it('knows nothing of an unknown code', async () => {
        assert.equal(await storage.codes.consume('no-such-code', 'some-client', T), undefined);
      });

      it('keeps every field of a code without PKCE', async () => {
        const code = aCode({ codeChallenge: null, codeChallengeMethod: null, scope: ['user', 'read', 'chat'] });
        await storage.codes.save(code);
        assert.deepEqual((await storage.codes.consume(code.codeHash, code.clientId, T))?.code, { ...code, consumedAt: T });
      });
    });

    describe('TokenStore', () => {
      it('stores and reads families, refresh tokens and opaque access tokens', async () => {
        const family = aFamily({ scope: ['user', 'read'] });
        const machine = aFamily({ userId: null, scope: [] });
        await storage.tokens.createFamily(family);
        await storage.tokens.createFamily(machine);
        assert.deepEqual(await storage.tokens.getFamily(family.id), family);
        assert.deepEqual(await storage.tokens.getFamily(machine.id), machine);
        assert.equal(await storage.tokens.getFamily('no-such-family'), undefined);

        const refresh = aRefresh(family);
        await storage.tokens.saveRefresh(refresh);
        assert.deepEqual(await storage.tokens.getRefresh(refresh.tokenHash), refresh);
        assert.equal(await storage.tokens.getRefresh('no-such-token'), undefined);

        const access = anAccess(family);
        const clientOnly = anAccess(null);
        await storage.tokens.saveAccess(access);
        await storage.tokens.saveAccess(clientOnly);
        assert.deepEqual(await storage.tokens.getAccess(access.tokenHash), access);
        assert.deepEqual(await storage.tokens.getAccess(clientOnly.tokenHash), clientOnly);
        assert.equal(await storage.tokens.getAccess('no-such-token'), undefined);
      });

      it('rotates a refresh token once; later calls report reuse', async () => {
        const family = aFamily();
        await storage.tokens.createFamily(family);
        const refresh = aRefresh(family);
        await storage.tokens.saveRefresh(refresh);
        assert.deepEqual(await storage.tokens.markRotated(refresh.tokenHash, T + 1), { token: { ...refresh, rotatedAt: T + 1 }, reuse: false });
        assert.deepEqual(await storage.tokens.markRotated(refresh.tokenHash, T + 2), { token: { ...refresh, rotatedAt: T + 1 }, reuse: true });
        assert.equal(await storage.tokens.markRotated('no-such-token', T), undefined);
      });

      it('never lets a revoked refresh token win a rotation', async () => {
        const family = aFamily();
        await storage.tokens.createFamily(family);
        const refresh = aRefresh(family, { revokedAt: T });
        await storage.tokens.saveRefresh(refresh);
        assert.equal((await storage.tokens.markRotated(refresh.tokenHash, T + 1))?.reuse, true);
      });

      it('revokes an opaque access token, keeping the first revocation time', async () => {
        const access = anAccess(null);
        await storage.tokens.saveAccess(access);
        await storage.tokens.revokeAccess(access.tokenHash, T + 1);
        await storage.tokens.revokeAccess(access.tokenHash, T + 2);
        assert.equal((await storage.tokens.getAccess(access.tokenHash))?.revokedAt, T + 1);
        await storage.tokens.revokeAccess('no-such-token', T);
      });

      it('revoking a family revokes its refresh and opaque access tokens, and nothing else', async () => {
        const family = aFamily();
        const other = aFamily();
        await storage.tokens.createFamily(family);
        await storage.tokens.createFamily(other);
        const rotated = aRefresh(family, { rotatedAt: T });
        const current = aRefresh(family);
        const earlier = aRefresh(family, { revokedAt: T - 1 });
        const access = anAccess(family);
        const otherRefresh = aRefresh(other);
        const otherAccess = anAccess(other);
        const loose = anAccess(null);
        for (const t of [rotated, current, earlier, otherRefresh]) await storage.tokens.saveRefresh(t);
        for (const t of [access, otherAccess, loose]) await storage.tokens.saveAccess(t);

        await storage.tokens.revokeFamily(family.id, T + 5);
        await storage.tokens.revokeFamily(family.id, T + 9);

        assert.equal((await storage.tokens.getFamily(family.id))?.revokedAt, T + 5);
        assert.equal((await storage.tokens.getRefresh(rotated.tokenHash))?.revokedAt, T + 5);
        assert.equal((await storage.tokens.getRefresh(current.tokenHash))?.revokedAt, T + 5);
        assert.equal((await storage.tokens.getRefresh(earlier.tokenHash))?.revokedAt, T - 1);
        assert.equal((await storage.tokens.getAccess(access.tokenHash))?.revokedAt, T + 5);
        assert.equal((await storage.tokens.getFamily(other.id))?.revokedAt, null);
        assert.equal((await storage.tokens.getRefresh(otherRefresh.tokenHash))?.revokedAt, null);
        assert.equal((await storage.tokens.getAccess(otherAccess.tokenHash))?.revokedAt, null);
        assert.equal((await storage.tokens.getAccess(loose.tokenHash))?.revokedAt, null);
        // A rotation attempt after the revocation cannot win.
        assert.equal((await storage.tokens.markRotated(current.tokenHash, T + 10))?.reuse, true);
      });

      it("revokeAllForUser revokes every family of the user at every client with its tokens, family-less access tokens too, and nothing else", async () => {
        const { tokens } = storage;
        const userId = `u-${randomUUID()}`;
        const [one, two] = [aFamily({ userId }), aFamily({ userId })];
        const earlier = aFamily({ userId, revokedAt: T - 1 });
        const other = aFamily();
        for (const f of [one, two, earlier, other]) await tokens.createFamily(f);
        const refreshes = [aRefresh(one), aRefresh(one, { rotatedAt: T }), aRefresh(two)];
        const accesses = [anAccess(one), anAccess(two)];
        // The implicit grant's: the user's, of no family.
        const loose = anAccess(null, { userId });
        const revokedBefore = aRefresh(two, { revokedAt: T - 5 });
        const othersRefresh = aRefresh(other);
        const othersAccess = anAccess(other);
        const machine = anAccess(null);
        for (const t of [...refreshes, revokedBefore, othersRefresh]) await tokens.saveRefresh(t);
        for (const t of [...accesses, loose, othersAccess, machine]) await tokens.saveAccess(t);

        assert.equal(await tokens.revokeAllForUser(userId, T + 5), 2, 'the two families not yet revoked');
        for (const f of [one, two]) assert.equal((await tokens.getFamily(f.id))?.revokedAt, T + 5);
        assert.equal((await tokens.getFamily(earlier.id))?.revokedAt, T - 1, 'an earlier revocation keeps its time');
        for (const t of refreshes) assert.equal((await tokens.getRefresh(t.tokenHash))?.revokedAt, T + 5);
        assert.equal((await tokens.getRefresh(revokedBefore.tokenHash))?.revokedAt, T - 5);
        for (const t of [...accesses, loose]) assert.equal((await tokens.getAccess(t.tokenHash))?.revokedAt, T + 5);
        // Another person's and a client's own tokens are untouched.
        assert.equal((await tokens.getFamily(other.id))?.revokedAt, null);
        assert.equal((await tokens.getRefresh(othersRefresh.tokenHash))?.revokedAt, null);
        assert.equal((await tokens.getAccess(othersAccess.tokenHash))?.revokedAt, null);
        assert.equal((await tokens.getAccess(machine.tokenHash))?.revokedAt, null);
        // No rotation wins afterwards; a second call finds nothing left.
        assert.equal((await tokens.markRotated(refreshes[2]!.tokenHash, T + 6))?.reuse, true);
        assert.equal(await tokens.revokeAllForUser(userId, T + 9), 0);
        assert.equal((await tokens.getFamily(one.id))?.revokedAt, T + 5);
        assert.deepEqual(await tokens.activeFamilies(userId, one.clientId), []);
      });

      it('revokeAllForUser joins the caller\'s transaction: a rollback revokes nothing', async () => {
        const userId = `u-${randomUUID()}`;
        const family = aFamily({ userId });
        await storage.tokens.createFamily(family);
        const refresh = aRefresh(family);
        await storage.tokens.saveRefresh(refresh);
        await assert.rejects(storage.transaction(async (tx) => {
          assert.equal(await tx.tokens.revokeAllForUser(userId, T + 5), 1);
          assert.equal(await tx.codes.deleteUnusedForUser(userId), 0);
          throw new Error('rolled back');
        }), /rolled back/);
        assert.equal((await storage.tokens.getFamily(family.id))?.revokedAt, null);
        assert.equal((await storage.tokens.getRefresh(refresh.tokenHash))?.revokedAt, null);
      });

      it('records revoked JWT ids, idempotently', async () => {
        const jti = randomUUID();
        assert.equal(await storage.tokens.isJtiRevoked(jti), false);
        await storage.tokens.revokeJti(jti, T + MINUTE);
        await storage.tokens.revokeJti(jti, T + MINUTE);
        assert.equal(await storage.tokens.isJtiRevoked(jti), true);
        assert.equal(await storage.tokens.isJtiRevoked(randomUUID()), false);
      });

      // Single logout revokes what the person signed in to with each client.
      it("token families: a user's unrevoked families with one client", async () => {
        const { tokens } = storage;
        const base = { userId: `u-${randomUUID()}`, clientId: 'app' };
        const live = aFamily(base);
        const revoked = aFamily({ ...base, revokedAt: T });
        for (const f of [live, revoked, aFamily({ ...base, clientId: 'other' }), aFamily({ clientId: 'app' })]) await tokens.createFamily(f);
        assert.deepEqual(await tokens.activeFamilies(base.userId, 'app'), [live.id]);
      });
    });
  });

  describe(`storage conformance: purging expired rows (${name})`, { skip }, () => {
    let storage: CodesAndTokens;
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
    });
    after(() => close());

    it('deletes expired tokens, jtis and codes, keeping used codes a day past expiry', async () => {
      const now = T + 10 * DAY;
      const family = aFamily();
      await storage.tokens.createFamily(family);
      const deadAccess = anAccess(family, { expiresAt: now - 1 });
      const liveAccess = anAccess(family, { expiresAt: now + MINUTE });
      const deadRefresh = aRefresh(family, { expiresAt: now - 1 });
      const liveRefresh = aRefresh(family, { expiresAt: now + DAY });
      for (const t of [deadAccess, liveAccess]) await storage.tokens.saveAccess(t);
      for (const t of [deadRefresh, liveRefresh]) await storage.tokens.saveRefresh(t);
      const deadJti = randomUUID();
      const liveJti = randomUUID();
      await storage.tokens.revokeJti(deadJti, now - 1);
      await storage.tokens.revokeJti(liveJti, now + MINUTE);
      // A used code stays a day past its expiry, so a late replay still finds (and revokes) what it issued.
      const recentlyUsed = aCode({ expiresAt: now - 60 * MINUTE, consumedAt: now - 61 * MINUTE });
      const longUsed = aCode({ expiresAt: now - 2 * DAY, consumedAt: now - 2 * DAY - MINUTE });
      const neverUsed = aCode({ expiresAt: now - 2 * DAY });
      const fresh = aCode({ expiresAt: now + MINUTE });
      for (const c of [recentlyUsed, longUsed, neverUsed, fresh]) await storage.codes.save(c);

      // Three expired token rows (access, refresh, revoked jti); two codes past their day of grace.
      assert.equal(await storage.tokens.purgeExpired(now), 3);
      assert.equal(await storage.codes.purgeExpired(now), 2);

      assert.equal(await storage.tokens.getAccess(deadAccess.tokenHash), undefined);
      assert.deepEqual(await storage.tokens.getAccess(liveAccess.tokenHash), liveAccess);
      assert.equal(await storage.tokens.getRefresh(deadRefresh.tokenHash), undefined);
      assert.deepEqual(await storage.tokens.getRefresh(liveRefresh.tokenHash), liveRefresh);
      assert.equal(await storage.tokens.isJtiRevoked(deadJti), false);
      assert.equal(await storage.tokens.isJtiRevoked(liveJti), true);
      assert.equal((await storage.codes.consume(recentlyUsed.codeHash, recentlyUsed.clientId, now))?.replay, true);
      assert.equal(await storage.codes.consume(longUsed.codeHash, longUsed.clientId, now), undefined);
      assert.equal(await storage.codes.consume(neverUsed.codeHash, neverUsed.clientId, now), undefined);
      assert.equal((await storage.codes.consume(fresh.codeHash, fresh.clientId, now))?.replay, false);
      assert.deepEqual(await storage.tokens.getFamily(family.id), family);

      assert.equal(await storage.tokens.purgeExpired(now), 0);
      assert.equal(await storage.codes.purgeExpired(now), 0);
    });

    it('purges a backlog larger than one batch, statement by statement, and nothing live', async () => {
      // Just after the test above, whose live rows must stay.
      const now = T + 10 * DAY + 1;
      const family = aFamily();
      await storage.tokens.createFamily(family);
      const dead = Array.from({ length: 7 }, () => anAccess(family, { expiresAt: now - 1 }));
      const live = anAccess(family, { expiresAt: now + MINUTE });
      for (const t of [...dead, live]) await storage.tokens.saveAccess(t);
      // Batches of 3: two full statements, a partial one, then done.
      assert.equal(await (storage.tokens as SqlTokenStore).purgeExpired(now, 3), 7);
      for (const t of dead) assert.equal(await storage.tokens.getAccess(t.tokenHash), undefined);
      assert.deepEqual(await storage.tokens.getAccess(live.tokenHash), live);
    });
  });
}
