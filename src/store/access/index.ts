import { sql, type Kysely } from 'kysely';
import type {
  AccessStore, AccessTransactions, ApproveOutcome, Elevation, ElevationState, Grantee, Group, GroupWithMembers, Member, Role, RoleWithGrants,
} from '../../core/access/ports.js';
import type { DB } from '../schema.js';
import type { NotifyShared } from '../notify/shared.js';
import { SqlEventStore } from '../notify/events.js';
import { runTransaction } from '../transaction.js';

/* The tables of migration 0028_access (src/store/access/migration.ts). */
declare module '../schema.js' {
  interface DB {
    access_groups: { id: string; name: string; name_lower: string; created_at: number };
    access_group_members: { group_id: string; user_id: string; created_at: number };
    access_roles: { id: string; name: string; name_lower: string; approvers_group_id: string | null; approvals: number; max_minutes: number | null; created_at: number };
    access_role_grants: { role_id: string; subject_type: string; subject_id: string; created_at: number };
    access_elevations: {
      id: string; user_id: string; role_id: string; minutes: number; reason: string; state: string; approvals: number; required: number;
      created_at: number; expires_at: number; decided_at: number | null; ends_at: number | null;
    };
    access_elevation_approvals: { elevation_id: string; approver_id: string; created_at: number };
    access_elevation_messages: { elevation_id: string; chat_id: string; message_id: number };
  }
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const changed = (r: { numUpdatedRows?: bigint; numDeletedRows?: bigint; numInsertedOrUpdatedRows?: bigint }) =>
  Number(r.numUpdatedRows ?? r.numDeletedRows ?? r.numInsertedOrUpdatedRows ?? 0n) > 0;

const toGroup = (r: DB['access_groups']): Group => ({ id: r.id, name: r.name, createdAt: Number(r.created_at) });
const toRole = (r: DB['access_roles']): Role => ({
  id: r.id, name: r.name, approversGroupId: r.approvers_group_id, approvals: Number(r.approvals), maxMinutes: num(r.max_minutes), createdAt: Number(r.created_at),
});
const toElevation = (r: DB['access_elevations']): Elevation => ({
  id: r.id, userId: r.user_id, roleId: r.role_id, minutes: Number(r.minutes), reason: r.reason, state: r.state as ElevationState,
  approvals: Number(r.approvals), required: Number(r.required), createdAt: Number(r.created_at), expiresAt: Number(r.expires_at),
  decidedAt: num(r.decided_at), until: num(r.ends_at),
});

/** Groups, roles and elevations on SQLite and PostgreSQL; every decision is one conditional statement. */
export class SqlAccessStore implements AccessStore {
  constructor(private readonly db: Kysely<DB>) {}

  async createGroup(g: Group): Promise<boolean> {
    const r = await this.db.insertInto('access_groups').values({ id: g.id, name: g.name, name_lower: g.name.toLowerCase(), created_at: g.createdAt })
      .onConflict((oc) => oc.column('name_lower').doNothing()).executeTakeFirst();
    return changed(r);
  }

  async groupByName(name: string): Promise<Group | undefined> {
    const r = await this.db.selectFrom('access_groups').selectAll().where('name_lower', '=', name.toLowerCase()).executeTakeFirst();
    return r && toGroup(r);
  }

  async groupById(id: string): Promise<Group | undefined> {
    const r = await this.db.selectFrom('access_groups').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toGroup(r);
  }

  async listGroups(): Promise<GroupWithMembers[]> {
    const groups = await this.db.selectFrom('access_groups').selectAll().orderBy('name_lower').execute();
    const members = await this.db.selectFrom('access_group_members as m').innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['m.group_id', 'u.id', 'u.username']).orderBy('u.username_lower').execute();
    return groups.map((g) => ({ ...toGroup(g), members: members.filter((m) => m.group_id === g.id).map((m) => ({ id: m.id, username: m.username })) }));
  }

  async addMember(groupId: string, userId: string, now: number): Promise<boolean> {
    const r = await this.db.insertInto('access_group_members').values({ group_id: groupId, user_id: userId, created_at: now })
      .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing()).executeTakeFirst();
    return changed(r);
  }

  async removeMember(groupId: string, userId: string): Promise<boolean> {
    return changed(await this.db.deleteFrom('access_group_members').where('group_id', '=', groupId).where('user_id', '=', userId).executeTakeFirst());
  }

  async isMember(groupId: string, userId: string): Promise<boolean> {
    const r = await this.db.selectFrom('access_group_members').select('user_id').where('group_id', '=', groupId).where('user_id', '=', userId).executeTakeFirst();
    return r !== undefined;
  }

  async members(groupId: string): Promise<string[]> {
    return (await this.db.selectFrom('access_group_members').select('user_id').where('group_id', '=', groupId).orderBy('created_at').execute()).map((r) => r.user_id);
  }

  async createRole(role: Role): Promise<boolean> {
    const r = await this.db.insertInto('access_roles').values({
      id: role.id, name: role.name, name_lower: role.name.toLowerCase(), approvers_group_id: role.approversGroupId, approvals: role.approvals,
      max_minutes: role.maxMinutes, created_at: role.createdAt,
    }).onConflict((oc) => oc.column('name_lower').doNothing()).executeTakeFirst();
    return changed(r);
  }

  async roleByName(name: string): Promise<Role | undefined> {
    const r = await this.db.selectFrom('access_roles').selectAll().where('name_lower', '=', name.toLowerCase()).executeTakeFirst();
    return r && toRole(r);
  }

  async roleById(id: string): Promise<Role | undefined> {
    const r = await this.db.selectFrom('access_roles').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toRole(r);
  }

  async listRoles(): Promise<RoleWithGrants[]> {
    const roles = await this.db.selectFrom('access_roles').selectAll().orderBy('name_lower').execute();
    const groups = new Map((await this.db.selectFrom('access_groups').select(['id', 'name']).execute()).map((g) => [g.id, g.name]));
    const users = await this.db.selectFrom('access_role_grants as g').innerJoin('users as u', 'u.id', 'g.subject_id')
      .select(['g.role_id', 'u.id', 'u.username']).where('g.subject_type', '=', 'user').orderBy('u.username_lower').execute();
    const grantedGroups = await this.db.selectFrom('access_role_grants').select(['role_id', 'subject_id']).where('subject_type', '=', 'group').execute();
    return roles.map((r) => ({
      ...toRole(r),
      approvers: r.approvers_group_id ? groups.get(r.approvers_group_id) ?? null : null,
      users: users.filter((u) => u.role_id === r.id).map((u): Member => ({ id: u.id, username: u.username })),
      groups: grantedGroups.filter((g) => g.role_id === r.id).map((g) => groups.get(g.subject_id)).filter((n): n is string => n !== undefined).sort(),
    }));
  }

  async grant(roleId: string, to: Grantee, now: number): Promise<boolean> {
    const r = await this.db.insertInto('access_role_grants').values({ role_id: roleId, subject_type: to.kind, subject_id: to.id, created_at: now })
      .onConflict((oc) => oc.columns(['role_id', 'subject_type', 'subject_id']).doNothing()).executeTakeFirst();
    return changed(r);
  }

  async revoke(roleId: string, from: Grantee): Promise<boolean> {
    return changed(await this.db.deleteFrom('access_role_grants').where('role_id', '=', roleId)
      .where('subject_type', '=', from.kind).where('subject_id', '=', from.id).executeTakeFirst());
  }

  async groupsOf(userId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('access_groups').select('name')
      .where('id', 'in', (eb) => eb.selectFrom('access_group_members').select('group_id').where('user_id', '=', userId))
      .orderBy('name').execute();
    return rows.map((r) => r.name);
  }

  async rolesOf(userId: string, now: number): Promise<string[]> {
    const rows = await this.db.selectFrom('access_roles').select('name').where((eb) => eb.or([
      eb('id', 'in', eb.selectFrom('access_role_grants').select('role_id').where('subject_type', '=', 'user').where('subject_id', '=', userId)),
      eb('id', 'in', eb.selectFrom('access_role_grants as g').innerJoin('access_group_members as m', 'm.group_id', 'g.subject_id')
        .select('g.role_id').where('g.subject_type', '=', 'group').where('m.user_id', '=', userId)),
      // An elevation counts until its end whether or not the sweep has marked it expired yet.
      eb('id', 'in', eb.selectFrom('access_elevations').select('role_id')
        .where('user_id', '=', userId).where('state', '=', 'granted').where('ends_at', '>', now)),
    ])).orderBy('name').execute();
    return rows.map((r) => r.name);
  }

  async createElevation(e: Elevation): Promise<void> {
    await this.db.insertInto('access_elevations').values({
      id: e.id, user_id: e.userId, role_id: e.roleId, minutes: e.minutes, reason: e.reason, state: e.state, approvals: e.approvals,
      required: e.required, created_at: e.createdAt, expires_at: e.expiresAt, decided_at: e.decidedAt, ends_at: e.until,
    }).execute();
  }

  async elevation(id: string): Promise<Elevation | undefined> {
    const r = await this.db.selectFrom('access_elevations').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toElevation(r);
  }

  async elevationsOf(userId: string, limit: number): Promise<Elevation[]> {
    const rows = await this.db.selectFrom('access_elevations').selectAll().where('user_id', '=', userId)
      .orderBy('created_at', 'desc').orderBy('id').limit(limit).execute();
    return rows.map(toElevation);
  }

  async approve(id: string, approverId: string, now: number): Promise<ApproveOutcome> {
    // The approver's row, only for a waiting request that is not theirs; the primary key counts each approver once
    // (a second press of the same person waits for the first's commit on PostgreSQL, then inserts nothing).
    const inserted = await this.db.insertInto('access_elevation_approvals').columns(['elevation_id', 'approver_id', 'created_at'])
      .expression((eb) => eb.selectFrom('access_elevations')
        .select([sql<string>`cast(${id} as text)`.as('elevation_id'), sql<string>`cast(${approverId} as text)`.as('approver_id'), sql<number>`cast(${now} as bigint)`.as('created_at')])
        .where('id', '=', id).where('state', '=', 'waiting').where('expires_at', '>', now).where('user_id', '<>', approverId))
      .onConflict((oc) => oc.columns(['elevation_id', 'approver_id']).doNothing())
      .executeTakeFirst();
    if (!changed(inserted)) {
      const counted = await this.db.selectFrom('access_elevation_approvals').select('approver_id').where('elevation_id', '=', id).where('approver_id', '=', approverId).executeTakeFirst();
      return counted ? { kind: 'duplicate' } : { kind: 'closed' };
    }
    // The request's row is the counter: concurrent approvals of different people queue on its lock, so each adds one
    // to the count the one before committed, and only the approval that reaches `required` moves the state.
    const row = await this.db.updateTable('access_elevations').set((eb) => ({ approvals: eb('approvals', '+', 1) }))
      .where('id', '=', id).where('state', '=', 'waiting').returningAll().executeTakeFirst();
    if (!row) return { kind: 'closed' };
    if (Number(row.approvals) < Number(row.required)) return { kind: 'counted', elevation: toElevation(row) };
    const granted = await this.db.updateTable('access_elevations')
      .set((eb) => ({ state: 'granted', decided_at: now, ends_at: eb(sql<number>`cast(${now} as bigint)`, '+', eb('minutes', '*', 60_000)) }))
      .where('id', '=', id).where('state', '=', 'waiting').returningAll().executeTakeFirst();
    return granted ? { kind: 'granted', elevation: toElevation(granted) } : { kind: 'closed' };
  }

  async deny(id: string, approverId: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('access_elevations').set({ state: 'denied', decided_at: now })
      .where('id', '=', id).where('state', '=', 'waiting').where('expires_at', '>', now).where('user_id', '<>', approverId).executeTakeFirst();
    return changed(r);
  }

  async expire(id: string, now: number): Promise<'waiting' | 'granted' | undefined> {
    const ended = await this.db.updateTable('access_elevations').set({ state: 'expired' })
      .where('id', '=', id).where('state', '=', 'granted').where('ends_at', '<=', now).executeTakeFirst();
    if (changed(ended)) return 'granted';
    const lapsed = await this.db.updateTable('access_elevations').set({ state: 'expired', decided_at: now })
      .where('id', '=', id).where('state', '=', 'waiting').where('expires_at', '<=', now).executeTakeFirst();
    return changed(lapsed) ? 'waiting' : undefined;
  }

  async dueToExpire(now: number, limit: number): Promise<Elevation[]> {
    const rows = await this.db.selectFrom('access_elevations').selectAll().where((eb) => eb.or([
      eb.and([eb('state', '=', 'waiting'), eb('expires_at', '<=', now)]),
      eb.and([eb('state', '=', 'granted'), eb('ends_at', '<=', now)]),
    ])).orderBy('created_at').limit(limit).execute();
    return rows.map(toElevation);
  }

  async addMessage(id: string, chatId: string, messageId: number): Promise<void> {
    await this.db.insertInto('access_elevation_messages').values({ elevation_id: id, chat_id: chatId, message_id: messageId })
      .onConflict((oc) => oc.columns(['elevation_id', 'chat_id', 'message_id']).doNothing()).execute();
  }

  async messages(id: string): Promise<{ chatId: string; messageId: number }[]> {
    const rows = await this.db.selectFrom('access_elevation_messages').select(['chat_id', 'message_id']).where('elevation_id', '=', id).execute();
    return rows.map((r) => ({ chatId: r.chat_id, messageId: Number(r.message_id) }));
  }
}

/** The access store with the outbox, in one transaction (an elevation's decision and its event). */
export function sqlAccessTransactions(db: Kysely<DB>, notify: NotifyShared): AccessTransactions {
  return {
    transaction: (fn) => runTransaction(db, (trx, scope) => ({ access: new SqlAccessStore(trx), events: new SqlEventStore(trx, notify, scope) }), fn),
  };
}
