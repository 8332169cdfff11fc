import type { Kysely } from 'kysely';
import type { Endpoint, EndpointPatch, EndpointStore } from '../../core/notify/ports.js';
import { MAIL_ENDPOINT_ID } from '../../core/mail/ports.js';
import { flag, joinWords } from '../codec.js';
import type { DB, WebhookEndpointsTable } from '../schema.js';
import { ENDPOINT_PREVIOUS_SECRET, ENDPOINT_SECRET } from '../secrets/sealed.js';
import { toEndpoint } from './codec.js';
import { within, type TxScope } from '../transaction.js';
import type { NotifyShared } from './shared.js';

/** The built-in e-mail endpoint (migration 0027_mail) is no webhook: no listing, change or deletion reaches it. */
export class SqlEndpointStore implements EndpointStore {
  constructor(private readonly db: Kysely<DB>, private readonly shared: NotifyShared, private readonly scope?: TxScope) {}

  /**
   * This process reads the subscriptions again after the commit; a change
   * that may add one also waits until every other process has (the token
   * path's cache, src/store/notify/shared.ts), so the first token.issued
   * after the answer is recorded wherever it is issued.
   */
  private subscriptionsChanged(scope: TxScope, adds: boolean): void {
    scope.afterCommit(this.shared.invalidate);
    if (adds) scope.afterCommit(this.shared.propagated);
  }

  async create(e: Endpoint): Promise<void> {
    await within(this.db, this.scope, async (trx, scope) => {
      await trx.insertInto('webhook_endpoints').values({
        id: e.id, kind: e.kind, url: e.url, chat_id: e.chatId, user_id: e.userId, event_types: joinWords(e.eventTypes),
        description: e.description, secret: this.shared.secrets.seal(e.secret, ENDPOINT_SECRET.aad(e.id)),
        previous_secret: this.shared.secrets.sealNullable(e.previousSecret, ENDPOINT_PREVIOUS_SECRET.aad(e.id)), previous_secret_expires_at: e.previousSecretExpiresAt,
        ordered: flag(e.ordered), disabled_at: e.disabledAt, disabled_reason: e.disabledReason, failing_since: e.failingSince,
        created_at: e.createdAt, updated_at: e.updatedAt,
      }).execute();
      await trx.insertInto('webhook_subscriptions').values(e.eventTypes.map((t) => ({ event_type: t, endpoint_id: e.id }))).execute();
      this.subscriptionsChanged(scope, !e.disabledAt);
    });
  }

  async get(id: string): Promise<Endpoint | undefined> {
    const r = await this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('kind', '!=', 'email').executeTakeFirst();
    return r && toEndpoint(r, this.shared.secrets);
  }

  async list(q: { userId?: string } = {}): Promise<Endpoint[]> {
    let query = this.db.selectFrom('webhook_endpoints').selectAll().where('kind', '!=', 'email');
    if (q.userId !== undefined) query = query.where('user_id', '=', q.userId);
    return (await query.orderBy('created_at').orderBy('id').execute()).map((r) => toEndpoint(r, this.shared.secrets));
  }

  async update(id: string, p: EndpointPatch, now: number): Promise<boolean> {
    return within(this.db, this.scope, async (trx, scope) => {
      const set: Partial<WebhookEndpointsTable> = { updated_at: now };
      if (p.eventTypes !== undefined) set.event_types = joinWords(p.eventTypes);
      if (p.description !== undefined) set.description = p.description;
      if (p.secret !== undefined) set.secret = this.shared.secrets.seal(p.secret, ENDPOINT_SECRET.aad(id));
      if (p.previousSecret !== undefined) set.previous_secret = this.shared.secrets.sealNullable(p.previousSecret, ENDPOINT_PREVIOUS_SECRET.aad(id));
      if (p.previousSecretExpiresAt !== undefined) set.previous_secret_expires_at = p.previousSecretExpiresAt;
      if (p.ordered !== undefined) set.ordered = flag(p.ordered);
      if (p.disabledAt !== undefined) set.disabled_at = p.disabledAt;
      if (p.disabledReason !== undefined) set.disabled_reason = p.disabledReason;
      if (p.failingSince !== undefined) set.failing_since = p.failingSince;
      const r = await trx.updateTable('webhook_endpoints').set(set).where('id', '=', id).where('kind', '!=', 'email').executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      if (p.eventTypes !== undefined) {
        await trx.deleteFrom('webhook_subscriptions').where('endpoint_id', '=', id).execute();
        await trx.insertInto('webhook_subscriptions').values(p.eventTypes.map((t) => ({ event_type: t, endpoint_id: id }))).execute();
      }
      if (p.eventTypes !== undefined || p.disabledAt !== undefined) this.subscriptionsChanged(scope, p.eventTypes !== undefined || p.disabledAt === null);
      return true;
    });
  }

  async delete(id: string): Promise<boolean> {
    if (id === MAIL_ENDPOINT_ID) return false;
    return within(this.db, this.scope, async (trx, scope) => {
      await trx.deleteFrom('webhook_attempts').where('endpoint_id', '=', id).execute();
      await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
      await trx.deleteFrom('webhook_subscriptions').where('endpoint_id', '=', id).execute();
      const r = await trx.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
      this.subscriptionsChanged(scope, false);
      return Number(r.numDeletedRows) > 0;
    });
  }
}
