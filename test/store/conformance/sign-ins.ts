import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { SignIn, SignInStore } from '../../../src/core/oidc/ports.js';
import { T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

const aSignIn = (over: Partial<SignIn> = {}): SignIn => ({
  familyId: randomUUID(), sid: 'sid-1', clientId: 'client-a', userId: 'user-1', authTime: T, createdAt: T, endedAt: null, claims: null, ...over,
});

/** SignInStore (single sign-on and single logout): what each session signed in to. */
export function signInsConformance(name: string, factory: StoreFactory<{ signIns: SignInStore }>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: single sign-on sign-ins (${name})`, { skip }, () => {
    let storage: { signIns: SignInStore };
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
    });
    after(() => close());

    it('sign-ins: by family, by live session, ended once however many sign-outs race', async () => {
      const { signIns } = storage;
      const one = aSignIn({ sid: 'sx', clientId: 'a' });
      const two = aSignIn({ sid: 'sx', clientId: 'b', createdAt: T + 1 });
      await signIns.record(one);
      await signIns.record(two);
      await signIns.record(aSignIn({ sid: 'other' }));
      assert.deepEqual(await signIns.byFamily(one.familyId), one);
      assert.equal(await signIns.byFamily('none'), undefined);
      assert.deepEqual((await signIns.forSession('sx')).map((x) => x.clientId), ['a', 'b']);

      const ended = await Promise.all([signIns.endSession('sx', T + 5), signIns.endSession('sx', T + 5), signIns.endSession('sx', T + 5)]);
      assert.equal(ended.flat().length, 2, 'each sign-in ended exactly once');
      assert.deepEqual(await signIns.forSession('sx'), []);
      // Kept for ID tokens issued on refresh (auth_time, sid) until purged by age, ended or not.
      assert.equal((await signIns.byFamily(one.familyId))?.endedAt, T + 5);
      assert.equal(await signIns.purge(T + 1), 2);
      assert.equal(await signIns.byFamily(one.familyId), undefined);
      assert.equal((await signIns.byFamily(two.familyId))?.clientId, 'b');
      assert.equal((await signIns.forSession('other')).length, 0);
    });
  });
}
