import { sql, type Kysely } from 'kysely';
import type { BackchannelKind, BackchannelRequest, BackchannelStatus, BackchannelStore, PollOutcome } from '../../core/oauth/device-ports.js';
import type { BackchannelRequestsTable, DB } from '../schema.js';
import { isUniqueViolation, joinWords, words } from '../codec.js';
import { isPostgres } from './statements.js';

const toRequest = (r: BackchannelRequestsTable): BackchannelRequest => ({
  id: r.id, kind: r.kind as BackchannelKind, secretHash: r.secret_hash, userCodeHash: r.user_code_hash, clientId: r.client_id,
  scope: words(r.scope), userId: r.user_id, status: r.status as BackchannelStatus, decidedAt: r.decided_at === null ? null : Number(r.decided_at),
  bindingMessage: r.binding_message, notificationToken: r.notification_token, intervalSeconds: Number(r.interval_s),
  lastPollAt: r.last_poll_at === null ? null : Number(r.last_poll_at), createdAt: Number(r.created_at), expiresAt: Number(r.expires_at),
  consumedAt: r.consumed_at === null ? null : Number(r.consumed_at),
});

/** Expired rows are deleted at most this often, by whichever request comes. */
const PURGE_EVERY_MS = 60_000;
/** Kept this long after expiry, so a late poll still hears expired_token rather than an unknown code. */
const KEEP_EXPIRED_MS = 3600_000;

/** RFC 8628 §3.5: each slow_down adds 5 seconds to the interval. */
const SLOW_DOWN_SECONDS = 5;

export class SqlBackchannelStore implements BackchannelStore {
  private purgedAt = 0;
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<DB>) {
    this.postgres = isPostgres(db);
  }

  private async purgeNowAndThen(now: number): Promise<void> {
    if (now - this.purgedAt > PURGE_EVERY_MS) {
      this.purgedAt = now;
      await this.purge(now - KEEP_EXPIRED_MS);
    }
  }

  async create(r: BackchannelRequest): Promise<boolean> {
    await this.purgeNowAndThen(r.createdAt);
    try {
      await this.db.insertInto('backchannel_requests').values({
        id: r.id, kind: r.kind, secret_hash: r.secretHash, user_code_hash: r.userCodeHash, client_id: r.clientId, scope: joinWords(r.scope),
        user_id: r.userId, status: r.status, decided_at: r.decidedAt, binding_message: r.bindingMessage, notification_token: r.notificationToken,
        interval_s: r.intervalSeconds, last_poll_at: r.lastPollAt, created_at: r.createdAt, expires_at: r.expiresAt, consumed_at: r.consumedAt,
      }).execute();
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }

  async createLimited(r: BackchannelRequest, max: number): Promise<boolean> {
    await this.purgeNowAndThen(r.createdAt);
    if (!this.postgres) return this.insertUnlessFull(this.db, r, max);
    // READ COMMITTED sees no row a concurrent insert has not committed: a transaction-scoped lock per
    // person makes the count and the insert one step (SQLite's single writer does that for the statement).
    const locked = async (db: Kysely<DB>) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${`ciba-pending:${r.userId ?? ''}`}, 0))`.execute(db);
      return this.insertUnlessFull(db, r, max);
    };
    return this.db.isTransaction ? locked(this.db) : this.db.transaction().execute(locked);
  }

  /** One INSERT … SELECT … WHERE (count of the person's pending CIBA requests) < max. */
  private async insertUnlessFull(db: Kysely<DB>, r: BackchannelRequest, max: number): Promise<boolean> {
    const big = (v: number | null) => sql`cast(${v} as bigint)`;
    const res = await sql`insert into backchannel_requests (id, kind, secret_hash, user_code_hash, client_id, scope, user_id, status, decided_at,
        binding_message, notification_token, interval_s, last_poll_at, created_at, expires_at, consumed_at)
      select ${r.id}, ${r.kind}, ${r.secretHash}, ${r.userCodeHash}, ${r.clientId}, ${joinWords(r.scope)}, ${r.userId}, ${r.status}, ${big(r.decidedAt)},
        ${r.bindingMessage}, ${r.notificationToken}, cast(${r.intervalSeconds} as integer), ${big(r.lastPollAt)}, ${big(r.createdAt)}, ${big(r.expiresAt)}, ${big(r.consumedAt)}
      where (select count(*) from backchannel_requests where user_id = ${r.userId} and kind = 'ciba' and status = 'pending'
        and consumed_at is null and expires_at > ${big(r.createdAt)}) < ${max}`.execute(db);
    return Number(res.numAffectedRows ?? 0) === 1;
  }

  async get(id: string): Promise<BackchannelRequest | undefined> {
    const r = await this.db.selectFrom('backchannel_requests').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toRequest(r);
  }

  async byUserCode(userCodeHash: string, now: number): Promise<BackchannelRequest | undefined> {
    const r = await this.db.selectFrom('backchannel_requests').selectAll()
      .where('user_code_hash', '=', userCodeHash).where('expires_at', '>', now).executeTakeFirst();
    return r && toRequest(r);
  }

  async poll(kind: BackchannelKind, secretHash: string, clientId: string, now: number): Promise<PollOutcome> {
    // The usual answer (still pending, polled in time) in one statement: the poll is admitted only when a
    // full interval has passed since the last admitted one.
    const admitted = await this.db.updateTable('backchannel_requests').set({ last_poll_at: now })
      .where('secret_hash', '=', secretHash).where('kind', '=', kind).where('client_id', '=', clientId)
      .where('consumed_at', 'is', null).where('expires_at', '>', now)
      .where((w) => w.or([w('last_poll_at', 'is', null), w(sql<number>`last_poll_at + interval_s * 1000`, '<=', now)]))
      .returning(['id', 'status'])
      .executeTakeFirst();
    if (admitted) {
      if (admitted.status === 'pending') return { kind: 'pending' };
      if (admitted.status === 'denied') return { kind: 'denied' };
      const burnt = await this.db.updateTable('backchannel_requests').set({ consumed_at: now })
        .where('id', '=', admitted.id).where('status', '=', 'approved').where('consumed_at', 'is', null)
        .returningAll().executeTakeFirst();
      return burnt ? { kind: 'approved', request: toRequest(burnt) } : { kind: 'used' };
    }
    const r = await this.db.selectFrom('backchannel_requests').select(['id', 'client_id', 'consumed_at', 'expires_at'])
      .where('secret_hash', '=', secretHash).where('kind', '=', kind).executeTakeFirst();
    // Another client's code is as good as none (RFC 8628 §3.4: the device_code is bound to its client).
    if (!r || r.client_id !== clientId) return { kind: 'unknown' };
    if (r.consumed_at !== null) return { kind: 'used' };
    if (Number(r.expires_at) <= now) return { kind: 'expired' };
    // Too soon: RFC 8628 §3.5, the interval grows by 5 seconds for every later poll.
    await this.db.updateTable('backchannel_requests')
      .set({ interval_s: sql<number>`interval_s + ${SLOW_DOWN_SECONDS}`, last_poll_at: now })
      .where('id', '=', r.id).execute();
    return { kind: 'slow_down' };
  }

  async decide(id: string, userId: string, status: 'approved' | 'denied', now: number): Promise<boolean> {
    const r = await this.db.updateTable('backchannel_requests').set({ status, user_id: userId, decided_at: now })
      .where('id', '=', id).where('status', '=', 'pending').where('expires_at', '>', now).where('consumed_at', 'is', null)
      .where((w) => w.or([w('user_id', 'is', null), w('user_id', '=', userId)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async claim(id: string, userId: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('backchannel_requests').set({ user_id: userId })
      .where('id', '=', id).where('status', '=', 'pending').where('expires_at', '>', now)
      .where((w) => w.or([w('user_id', 'is', null), w('user_id', '=', userId)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async purge(before: number): Promise<number> {
    const r = await this.db.deleteFrom('backchannel_requests').where('expires_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
