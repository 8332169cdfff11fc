import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { MAIL_ENDPOINT_ID, MAIL_EVENT_TYPE, type MailDelivery, type MailOutbox, type QueuedMail } from '../../core/mail/ports.js';
import type { MailTemplate } from '../../core/mail/templates.js';
import type { DeliveryStatus } from '../../core/notify/ports.js';
import type { SecretBox } from '../../core/secret-box.js';
import type { DB } from '../schema.js';
import { ENDPOINT_SECRET, MAIL_MESSAGE } from '../secrets/sealed.js';
import { deliveryId, toDelivery } from '../notify/codec.js';
import type { NotifyShared } from '../notify/shared.js';
import { within, type TxScope } from '../transaction.js';

/** What the outbox row shows of a message (the console's list); the rest is sealed in `mail_messages`. */
interface Envelope {
  to: string;
  template: string;
}

/** Sealed: what the message says, links included. */
interface Contents {
  to: string;
  template: MailTemplate;
  data: unknown;
}

/**
 * The e-mail outbox on the notification tables: the message's outbox row and
 * its one delivery, to the built-in e-mail endpoint, written directly rather
 * than through `EventStore.append`, so no webhook subscribed to `*` ever
 * receives a message (nor its recipient).
 */
export class SqlMailOutbox implements MailOutbox {
  constructor(private readonly db: Kysely<DB>, private readonly shared: NotifyShared, private readonly secrets: SecretBox, private readonly scope?: TxScope) {}

  async enqueue(m: QueuedMail): Promise<void> {
    const envelope: Envelope = { to: m.to, template: m.template };
    const contents: Contents = { to: m.to, template: m.template, data: m.data };
    await within(this.db, this.scope, async (trx, scope) => {
      // The endpoint its deliveries go to, made by the first message (its signing secret is never used, but sealed like any).
      await trx.insertInto('webhook_endpoints').values({
        id: MAIL_ENDPOINT_ID, kind: 'email', url: null, chat_id: null, user_id: null, event_types: '', description: 'e-mail (GATEHOUSE_SMTP_URL)',
        secret: this.secrets.seal(randomBytes(24).toString('base64url'), ENDPOINT_SECRET.aad(MAIL_ENDPOINT_ID)), previous_secret: null,
        previous_secret_expires_at: null, ordered: 0, disabled_at: null, disabled_reason: null, failing_since: null, created_at: m.createdAt, updated_at: m.createdAt,
      }).onConflict((oc) => oc.column('id').doNothing()).execute();
      await trx.insertInto('notify_events').values({
        id: m.id, type: MAIL_EVENT_TYPE, version: 1, user_id: m.userId, data: JSON.stringify(envelope), created_at: m.createdAt,
      }).execute();
      await trx.insertInto('mail_messages').values({ id: m.id, message: this.secrets.seal(JSON.stringify(contents), MAIL_MESSAGE.aad(m.id)), created_at: m.createdAt }).execute();
      await trx.insertInto('webhook_deliveries').values({
        id: deliveryId(MAIL_ENDPOINT_ID, m.id), endpoint_id: MAIL_ENDPOINT_ID, event_id: m.id, status: 'pending', attempts: 0, retry_base: 0,
        next_attempt_at: m.createdAt, created_at: m.createdAt, updated_at: m.createdAt,
      }).execute();
      // The worker wakes once the change and its message are committed, never for a rollback.
      scope.afterCommit(this.shared.appended);
    });
  }

  async open(id: string): Promise<QueuedMail | undefined> {
    const r = await this.db.selectFrom('mail_messages as m').innerJoin('notify_events as v', 'v.id', 'm.id')
      .select(['m.message', 'v.user_id', 'v.created_at']).where('m.id', '=', id).executeTakeFirst();
    if (!r) return undefined;
    const c = JSON.parse(this.secrets.open(r.message, MAIL_MESSAGE.aad(id))) as Contents;
    return { id, to: c.to, template: c.template, data: c.data as QueuedMail['data'], userId: r.user_id, createdAt: Number(r.created_at) };
  }

  async list(q: { status?: DeliveryStatus; limit: number }): Promise<MailDelivery[]> {
    let query = this.db.selectFrom('webhook_deliveries as d').innerJoin('notify_events as v', 'v.id', 'd.event_id')
      .selectAll('d').select(['v.data', 'v.user_id']).where('d.endpoint_id', '=', MAIL_ENDPOINT_ID);
    if (q.status) query = query.where('d.status', '=', q.status);
    const rows = await query.orderBy('d.created_at', 'desc').orderBy('d.event_id', 'desc').limit(q.limit).execute();
    return rows.map((r) => {
      const e = JSON.parse(r.data) as Envelope;
      return { delivery: toDelivery(r), to: e.to, template: e.template, userId: r.user_id };
    });
  }

  /** Contents are needed only until delivery (a dead letter keeps them for a replay, until its outbox row is purged). */
  async purge(): Promise<number> {
    const r = await this.db.deleteFrom('mail_messages').where((eb) => eb.or([
      eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id')
        .where('d.endpoint_id', '=', MAIL_ENDPOINT_ID).whereRef('d.event_id', '=', 'mail_messages.id').where('d.status', '=', 'delivered')),
      eb.not(eb.exists(eb.selectFrom('notify_events as v').select('v.id').whereRef('v.id', '=', 'mail_messages.id'))),
    ])).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
