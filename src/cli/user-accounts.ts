import type { Config } from '../config.js';
import { UserAccounts } from '../core/account/user-accounts.js';
import type { UserAccountStores } from '../core/account/user-accounts-ports.js';
import { invalidRequest, notFound } from '../core/errors.js';
import { Mailer } from '../core/mail/mailer.js';
import { systemClock, type Storage } from '../core/ports.js';
import { argon2Hasher } from '../infra/argon2.js';
import type { SqlStorage } from '../store/index.js';
import { UsageError } from './args.js';
import { parserOptions } from './commands.js';
import type { CliHelpers } from './event-webhooks.js';
import { withSessions } from './user-lock.js';

/** The server's e-mail settings: a message queued here is sent by a running server's worker (the outbox). */
const accountsFor = (config: Config) =>
  new UserAccounts({ hasher: argon2Hasher(), mailer: new Mailer(config.smtp !== undefined, systemClock, { name: 'Gatehouse', url: config.authUrl }) });

/** The account change in one transaction, with sessions where the server keeps them (GATEHOUSE_REDIS_URL). */
async function inTransaction<T>(h: CliHelpers, config: Config, fn: (tx: UserAccountStores, sql: SqlStorage) => Promise<T>): Promise<T> {
  return h.withStorage(config, (sql) => withSessions(sql, config.redisUrl, config.redisPrefix, (s: Storage) =>
    sql.userAccountTransactions.transaction((tx) => fn(s === sql ? tx : { ...tx, sessions: s.sessions }, sql))));
}

async function userId(tx: UserAccountStores, username: unknown): Promise<string> {
  if (typeof username !== 'string' || !username) throw invalidRequest('--username is required');
  const user = await tx.users.findByUsername(username);
  if (!user) throw notFound(`there is no user ${username}`);
  return user.id;
}

/** `gatehouse user list | set-password | delete` (issue 26, item 6; the console and the admin API do the same through src/core/account). */
export function userAccountCommands(h: CliHelpers, readStdin: () => Promise<string>): Record<string, (args: string[]) => Promise<void>> {
  return {
    'user list': async (args) => {
      const { values } = h.parse(args, parserOptions('user list'));
      const config = h.configFrom(values);
      const users = await h.withStorage(config, async (sql) => {
        const all = [];
        // Pages of 500, so a large deployment is listed without one huge query.
        for (let offset = 0; ; offset += 500) {
          const page = await sql.userAccounts.list({ limit: 500, offset, ...(typeof values.search === 'string' && values.search ? { search: values.search } : {}) });
          all.push(...page);
          if (page.length < 500) return all;
        }
      });
      const out = users.map((u) => ({
        id: u.id, username: u.username, email: u.email, email_verified: u.emailVerified, name: u.name, locked: u.lockedAt !== null, admin: u.admin,
        created_at: new Date(u.createdAt).toISOString(),
      }));
      h.print(Boolean(values.json), { users: out }, out.length
        ? out.map((u) => `${u.username}\t${u.id}\t${u.email}${u.admin ? '\tadmin' : ''}${u.locked ? '\tlocked' : ''}`).join('\n')
        : 'no users yet');
    },
    'user set-password': async (args) => {
      const { values } = h.parse(args, parserOptions('user set-password'));
      if (!values['password-stdin']) throw new UsageError('--password-stdin is required (passwords are never taken as arguments)');
      const config = h.configFrom(values);
      const password = await readStdin();
      const accounts = accountsFor(config);
      const r = await h.withStorage(config, async (sql) => {
        const user = await sql.users.findByUsername(String(values.username ?? ''));
        if (!user) throw values.username ? notFound(`there is no user ${String(values.username)}`) : invalidRequest('--username is required');
        // Checked and hashed before the transaction opens.
        const prepared = await accounts.prepare(password, user);
        return withSessions(sql, config.redisUrl, config.redisPrefix, (s: Storage) =>
          // Sessions in Redis are ended there; otherwise in the transaction (SQLite has one connection: never the outer store inside it).
          sql.userAccountTransactions.transaction((tx) => accounts.setPassword(s === sql ? tx : { ...tx, sessions: s.sessions }, user.id, prepared, { by: 'cli' }, systemClock.now())));
      });
      h.print(Boolean(values.json), { id: r.userId, username: r.username, sessions_ended: r.sessionsEnded, grants_revoked: r.familiesRevoked },
        `set a new password for ${r.username} (${r.userId}): ${r.sessionsEnded} session${r.sessionsEnded === 1 ? '' : 's'} ended, ${r.familiesRevoked} grant${r.familiesRevoked === 1 ? '' : 's'} revoked`);
    },
    'user delete': async (args) => {
      const { values } = h.parse(args, parserOptions('user delete'));
      const config = h.configFrom(values);
      const accounts = accountsFor(config);
      const r = await inTransaction(h, config, async (tx) => accounts.deleteAccount(tx, await userId(tx, values.username), { by: 'cli' }, systemClock.now()));
      h.print(Boolean(values.json), { id: r.userId, username: r.username, deleted: true, grants_revoked: r.familiesRevoked },
        `deleted ${r.username} (${r.userId}) and its personal data; ${r.familiesRevoked} grant${r.familiesRevoked === 1 ? '' : 's'} revoked`);
    },
  };
}
