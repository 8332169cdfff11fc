// An approval's decision, its event and the lock after "Not me" are one transaction: when any of the
// writes fails, none is stored, and the person can press again (src/core/mfa/ports.ts, ApprovalStores).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser } from '../../src/core/admin.js';
import { LocalWakeups } from '../../src/core/bot/wakeups.js';
import { ChatApproval, APPROVAL_TTL_MS } from '../../src/core/mfa/approval.js';
import type { ApprovalTransactions } from '../../src/core/mfa/ports.js';
import { ChatActions } from '../../src/core/notify/actions.js';
import { generateSecretKey } from '../../src/core/secret-box.js';
import { argon2Hasher } from '../../src/infra/argon2.js';
import { openStorage, type SqlStorage } from '../../src/store/index.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';

const CHAT = '4242';

for (const { kind, skip } of await databaseKinds()) {
  describe(`sign-in approval: the decision and its event in one transaction (${kind})`, { skip }, () => {
    let storage: SqlStorage;
    let dir: string;
    let databaseUrl: string;
    let userId: string;
    const clock = { now: () => Date.now() };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gh-approval-'));
      databaseUrl = kind === 'sqlite' ? `sqlite:${join(dir, 'g.db')}` : freshDatabaseUrl('postgres');
      storage = await openStorage(databaseUrl, { secretKey: generateSecretKey().toString('base64') });
      userId = (await createUser(storage, argon2Hasher(), clock, { username: 'carol', email: 'carol@example.test', password: 'a long enough password' })).id;
    });
    after(async () => {
      await storage?.close();
      await dropDatabase(databaseUrl);
      rmSync(dir, { recursive: true, force: true });
    });

    /** A waiting approval of a pending login, as the second step stores it. */
    async function waiting(id: string): Promise<void> {
      const now = clock.now();
      await storage.mfa.putPending(`pending-${id}`, {
        userId, returnTo: '/account', userAgent: null, ip: '203.0.113.9', createdAt: now, expiresAt: now + 5 * 60_000,
        approval: { id, number: 42, choices: [17, 42, 63], chatId: CHAT, messageId: null, state: 'waiting', expiresAt: now + APPROVAL_TTL_MS },
      });
    }

    function approvalOn(transactions: ApprovalTransactions): ChatActions {
      const actions = new ChatActions();
      new ChatApproval({ store: storage.mfa, events: storage.events, users: storage.users, clock, bot: undefined, wakeups: new LocalWakeups(), transactions }).register(actions);
      return actions;
    }

    /** The real transactions, with the outbox write failing: as if the database refused it mid-transaction. */
    const failingOutbox: ApprovalTransactions = {
      transaction: (fn) => storage.approvals.transaction((tx) => fn({
        ...tx, afterCommit: (h) => tx.afterCommit(h),
        events: { hasSubscriber: (t) => tx.events.hasSubscriber(t), append: () => Promise.reject(new Error('the outbox write failed')) },
      })),
    };

    const eventsOf = async (type: string, approvalId: string) =>
      (await storage.events.list({ type, limit: 100 })).filter((e) => (e.data as { approval_id?: string }).approval_id === approvalId || type === 'user.locked');

    it('"Not me" whose event cannot be written stores nothing: still waiting, not locked; pressed again, all three are stored', async () => {
      const id = 'notmeAtomicTest1';
      await waiting(id);
      const press = { chatId: CHAT, messageId: undefined, now: clock.now() };
      await assert.rejects(approvalOn(failingOutbox).dispatch(`signin:${id}.n`, press), /the outbox write failed/);
      assert.equal((await storage.mfa.findApproval(id))?.pending.approval?.state, 'waiting');
      assert.equal(await storage.console.isLocked(userId), false);
      assert.equal((await eventsOf('signin.approval.denied', id)).length, 0);
      assert.equal((await eventsOf('user.locked', id)).length, 0);

      const outcome = await approvalOn(storage.approvals).dispatch(`signin:${id}.n`, press);
      assert.match(outcome.answer, /locked/);
      assert.equal((await storage.mfa.findApproval(id))?.pending.approval?.state, 'denied');
      assert.equal(await storage.console.isLocked(userId), true);
      assert.deepEqual((await eventsOf('signin.approval.denied', id)).map((e) => (e.data as { reason: string }).reason), ['not_me']);
      assert.equal((await eventsOf('user.locked', id)).length, 1);
      await storage.console.setLocked(userId, null);
    });

    it('the right number whose event cannot be written is not approved; the next press approves once, with one event', async () => {
      const id = 'rightAtomicTest1';
      await waiting(id);
      const press = { chatId: CHAT, messageId: undefined, now: clock.now() };
      // choices[1] is the page's number.
      await assert.rejects(approvalOn(failingOutbox).dispatch(`signin:${id}.1`, press), /the outbox write failed/);
      assert.equal((await storage.mfa.findApproval(id))?.pending.approval?.state, 'waiting');
      assert.equal((await eventsOf('signin.approval.approved', id)).length, 0);

      const [a, b] = await Promise.all([1, 1].map(() => approvalOn(storage.approvals).dispatch(`signin:${id}.1`, press)));
      assert.deepEqual([a!.answer, b!.answer].sort(), ['Approved. The sign-in continues.', 'This request was already approved.']);
      assert.equal((await eventsOf('signin.approval.approved', id)).length, 1);
    });

    it('an expiry whose event cannot be written leaves the approval waiting; the next sweep records it once', async () => {
      const id = 'expireAtomicTst1';
      await waiting(id);
      const late = clock.now() + APPROVAL_TTL_MS + 1000;
      const pending = (await storage.mfa.findApproval(id))!.pending;
      const failing = new ChatApproval({ store: storage.mfa, events: storage.events, users: storage.users, clock, bot: undefined, wakeups: new LocalWakeups(), transactions: failingOutbox });
      await assert.rejects(failing.expireIfDue(pending, late), /the outbox write failed/);
      assert.equal((await storage.mfa.findApproval(id))?.pending.approval?.state, 'waiting');

      const real = new ChatApproval({ store: storage.mfa, events: storage.events, users: storage.users, clock, bot: undefined, wakeups: new LocalWakeups(), transactions: storage.approvals });
      await Promise.all([real.expireIfDue(structuredClone(pending), late), real.expireIfDue(structuredClone(pending), late)]);
      assert.equal((await storage.mfa.findApproval(id))?.pending.approval?.state, 'expired');
      assert.deepEqual((await eventsOf('signin.approval.denied', id)).map((e) => (e.data as { reason: string }).reason), ['expired']);
    });
  });
}
