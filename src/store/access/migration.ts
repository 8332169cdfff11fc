import type { Kysely, Migration } from 'kysely';

/**
 * 0028_access (issue 28): groups, roles, who holds them, and elevations
 * approved in chat. Names are unique in any case (`name_lower`). A role is
 * granted to a person or a group (`subject_type` user|group). An elevation
 * counts its approvals on its own row (`approvals`, updated conditionally) and
 * keeps one row per approver (the primary key counts each approver once).
 */
export const accessMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('access_groups')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_lower', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createTable('access_group_members')
      .addColumn('group_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('access_group_members_pk', ['group_id', 'user_id'])
      .execute();
    await db.schema.createIndex('access_group_members_user').on('access_group_members').column('user_id').execute();
    await db.schema.createTable('access_roles')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_lower', 'text', (c) => c.notNull().unique())
      .addColumn('approvers_group_id', 'text')
      .addColumn('approvals', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('max_minutes', 'integer')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createTable('access_role_grants')
      .addColumn('role_id', 'text', (c) => c.notNull())
      .addColumn('subject_type', 'text', (c) => c.notNull())
      .addColumn('subject_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('access_role_grants_pk', ['role_id', 'subject_type', 'subject_id'])
      .execute();
    await db.schema.createIndex('access_role_grants_subject').on('access_role_grants').columns(['subject_type', 'subject_id']).execute();
    await db.schema.createTable('access_elevations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('role_id', 'text', (c) => c.notNull())
      .addColumn('minutes', 'integer', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('approvals', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('required', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addColumn('ends_at', 'bigint')
      .execute();
    await db.schema.createIndex('access_elevations_user').on('access_elevations').columns(['user_id', 'state']).execute();
    await db.schema.createIndex('access_elevations_state').on('access_elevations').columns(['state', 'expires_at']).execute();
    await db.schema.createTable('access_elevation_approvals')
      .addColumn('elevation_id', 'text', (c) => c.notNull())
      .addColumn('approver_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('access_elevation_approvals_pk', ['elevation_id', 'approver_id'])
      .execute();
    await db.schema.createTable('access_elevation_messages')
      .addColumn('elevation_id', 'text', (c) => c.notNull())
      .addColumn('chat_id', 'text', (c) => c.notNull())
      .addColumn('message_id', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('access_elevation_messages_pk', ['elevation_id', 'chat_id', 'message_id'])
      .execute();
  },
};
