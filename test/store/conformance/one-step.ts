import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CodeRedemption, NextRefresh, Stores } from '../../../src/core/ports.js';
import { aCode, aFamily, anAccess, aRefresh, DAY, hashOf, MINUTE, T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

type CodesAndTokens = Pick<Stores, 'codes' | 'tokens'>;

const next = (over: Partial<NextRefresh> = {}): NextRefresh => ({ tokenHash: hashOf('next'), expiresAt: T + 2 * DAY, dpopJkt: null, ...over });

/**
 * The one-step rotation and code redemption (`TokenStore.rotateRefresh`,
 * `CodeStore.redeem`), the group-committed opaque tokens and the coalesced
 * lookups: all or nothing, one winner under concurrency, nothing stale.
 */
export function oneStepConformance(name: string, factory: StoreFactory<CodesAndTokens>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: one-step rotation and redemption (${name})`, { skip }, () => {
    let storage: CodesAndTokens;
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
    });
    after(() => close());

    const rotation = async (over: { revoked?: boolean; dpopJkt?: string } = {}) => {
      const family = aFamily(over.revoked ? { revokedAt: T } : {});
      await storage.tokens.createFamily(family);
      const refresh = aRefresh(family, { resources: ['https://api.example.test/'], ...(over.dpopJkt ? { dpopJkt: over.dpopJkt } : {}) });
      await storage.tokens.saveRefresh(refresh);
      return { family, refresh };
    };

    it('rotates once and stores the successor with the grant copied', async () => {
      const { refresh } = await rotation();
      const n = next({ dpopJkt: 'jkt-1' });
      const req = { tokenHash: refresh.tokenHash, clientId: refresh.clientId, now: T + 1, jkt: null, next: n };
      assert.deepEqual(await storage.tokens.rotateRefresh(req), { ...refresh, rotatedAt: T + 1 });
      assert.deepEqual(await storage.tokens.getRefresh(n.tokenHash), {
        ...refresh, tokenHash: n.tokenHash, createdAt: T + 1, expiresAt: n.expiresAt, rotatedAt: null, revokedAt: null, dpopJkt: 'jkt-1',
      });
      const again = next();
      assert.equal(await storage.tokens.rotateRefresh({ ...req, now: T + 2, next: again }), undefined);
      assert.equal(await storage.tokens.getRefresh(again.tokenHash), undefined);
      // The step-by-step path then sees the reuse.
      assert.equal((await storage.tokens.markRotated(refresh.tokenHash, T + 3))?.reuse, true);
    });

    it('writes nothing for another client, an expired token, a revoked family or a missing DPoP key', async () => {
      const cases = [
        { setup: await rotation(), client: 'another-client', now: T + 1, jkt: null },
        { setup: await rotation(), client: undefined, now: T + DAY, jkt: null },
        { setup: await rotation({ revoked: true }), client: undefined, now: T + 1, jkt: null },
        { setup: await rotation({ dpopJkt: 'bound' }), client: undefined, now: T + 1, jkt: null },
        { setup: await rotation({ dpopJkt: 'bound' }), client: undefined, now: T + 1, jkt: 'other' },
      ];
      for (const c of cases) {
        const n = next();
        const { refresh } = c.setup;
        assert.equal(await storage.tokens.rotateRefresh({ tokenHash: refresh.tokenHash, clientId: c.client ?? refresh.clientId, now: c.now, jkt: c.jkt, next: n }), undefined);
        assert.equal(await storage.tokens.getRefresh(n.tokenHash), undefined);
        assert.equal((await storage.tokens.getRefresh(refresh.tokenHash))?.rotatedAt, null);
      }
      const { refresh } = await rotation({ dpopJkt: 'bound' });
      assert.ok(await storage.tokens.rotateRefresh({ tokenHash: refresh.tokenHash, clientId: refresh.clientId, now: T + 1, jkt: 'bound', next: next() }));
    });

    it('lets one of 10 concurrent rotations win, with one successor', async () => {
      const { refresh } = await rotation();
      const successors = Array.from({ length: 10 }, () => next());
      const results = await Promise.all(successors.map((n) =>
        storage.tokens.rotateRefresh({ tokenHash: refresh.tokenHash, clientId: refresh.clientId, now: T + 1, jkt: null, next: n })));
      assert.equal(results.filter(Boolean).length, 1);
      const stored = await Promise.all(successors.map((n) => storage.tokens.getRefresh(n.tokenHash)));
      assert.equal(stored.filter(Boolean).length, 1);
      assert.equal(stored.findIndex(Boolean), results.findIndex(Boolean));
    });

    const redemption = (code: ReturnType<typeof aCode>, over: Partial<CodeRedemption> = {}): CodeRedemption & { refresh: NextRefresh } => ({
      codeHash: code.codeHash, clientId: code.clientId, now: T + 1, redirectUri: code.redirectUri, challenge: code.codeChallenge,
      jkt: null, refresh: next(), ...over,
    } as CodeRedemption & { refresh: NextRefresh });

    it('redeems a code once: burnt, its family created, its refresh token stored', async () => {
      const code = aCode({ resources: ['https://api.example.test/'] });
      await storage.codes.save(code);
      const req = redemption(code);
      assert.deepEqual(await storage.codes.redeem(req), { ...code, consumedAt: T + 1 });
      assert.deepEqual(await storage.tokens.getFamily(code.familyId), { id: code.familyId, clientId: code.clientId, userId: code.userId, scope: code.scope, createdAt: T + 1, revokedAt: null });
      assert.deepEqual(await storage.tokens.getRefresh(req.refresh.tokenHash), {
        tokenHash: req.refresh.tokenHash, familyId: code.familyId, clientId: code.clientId, userId: code.userId, scope: code.scope,
        resources: code.resources, createdAt: T + 1, expiresAt: req.refresh.expiresAt, rotatedAt: null, revokedAt: null,
      });
      assert.equal(await storage.codes.redeem(redemption(code, { now: T + 2 })), undefined);
      assert.equal((await storage.codes.consume(code.codeHash, code.clientId, T + 3))?.replay, true);
    });

    it('writes nothing when a check fails; the code is then still unused', async () => {
      const failing: ((c: ReturnType<typeof aCode>) => Partial<CodeRedemption>)[] = [
        () => ({ clientId: 'another-client' }),
        () => ({ now: T + MINUTE }),
        () => ({ redirectUri: 'https://evil.example.test/' }),
        () => ({ redirectUri: null }),
        () => ({ challenge: hashOf('wrong') }),
        () => ({ challenge: null }),
      ];
      for (const over of failing) {
        const code = aCode();
        await storage.codes.save(code);
        const req = redemption(code, over(code));
        assert.equal(await storage.codes.redeem(req), undefined);
        assert.equal(await storage.tokens.getFamily(code.familyId), undefined);
        assert.equal(await storage.tokens.getRefresh(req.refresh.tokenHash), undefined);
        assert.equal((await storage.codes.consume(code.codeHash, code.clientId, T + 2))?.replay, false);
      }
      // A code without PKCE is redeemed without a verifier, never with one (RFC 9700 §2.1.1).
      const plain = aCode({ codeChallenge: null, codeChallengeMethod: null, redirectUri: null, dpopJkt: 'bound' });
      await storage.codes.save(plain);
      assert.equal(await storage.codes.redeem(redemption(plain, { challenge: hashOf('x'), jkt: 'bound' })), undefined);
      assert.equal(await storage.codes.redeem(redemption(plain, { redirectUri: 'https://any.example.test/', jkt: 'other' })), undefined);
      assert.ok(await storage.codes.redeem({ ...redemption(plain, { redirectUri: 'https://any.example.test/', jkt: 'bound' }), refresh: null }));
    });

    it('keeps a family a replay wrote first revoked, and lets one of 10 concurrent redemptions win', async () => {
      const code = aCode();
      await storage.codes.save(code);
      await storage.tokens.createFamily({ id: code.familyId, clientId: code.clientId, userId: code.userId, scope: code.scope, createdAt: T, revokedAt: T });
      const reqs = Array.from({ length: 10 }, () => redemption(code));
      const results = await Promise.all(reqs.map((r) => storage.codes.redeem(r)));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal((await storage.tokens.getFamily(code.familyId))?.revokedAt, T);
      const stored = await Promise.all(reqs.map((r) => storage.tokens.getRefresh(r.refresh.tokenHash)));
      assert.equal(stored.filter(Boolean).length, 1);
    });

    it('stores 300 concurrent opaque tokens, each answered once its own row is there; a duplicate fails alone', async () => {
      const tokens = Array.from({ length: 300 }, () => anAccess(null));
      const dup = { ...tokens[5]!, jti: 'dup' };
      const results = await Promise.allSettled([...tokens, dup].map(async (t) => {
        await storage.tokens.saveAccess(t);
        return storage.tokens.getAccess(t.tokenHash);
      }));
      // Of the two rows with one hash, one is stored (which one depends on which group commits first).
      assert.equal(results.filter((r) => r.status === 'rejected').length, 1);
      assert.ok(results[5]!.status === 'rejected' || results.at(-1)!.status === 'rejected');
      results.slice(0, -1).forEach((r, i) => i === 5 || assert.deepEqual(r.status === 'fulfilled' && r.value, tokens[i]));
    });

    it('concurrent lookups each get their own row, and see a revocation made just before', async () => {
      const family = aFamily();
      await storage.tokens.createFamily(family);
      const tokens = Array.from({ length: 20 }, () => anAccess(family));
      for (const t of tokens) await storage.tokens.saveAccess(t);
      await storage.tokens.revokeAccess(tokens[3]!.tokenHash, T + 1);
      const read = await Promise.all([...tokens.map((t) => storage.tokens.getAccess(t.tokenHash)), storage.tokens.getAccess('no-such-token')]);
      assert.deepEqual(read, [...tokens.map((t, i) => (i === 3 ? { ...t, revokedAt: T + 1 } : t)), undefined]);
      await storage.tokens.revokeFamily(family.id, T + 2);
      const after = await Promise.all([storage.tokens.getFamily(family.id), storage.tokens.getAccess(tokens[0]!.tokenHash), storage.tokens.getFamily('none')]);
      assert.deepEqual(after.map((x) => x?.revokedAt), [T + 2, T + 2, undefined]);
    });
  });
}
