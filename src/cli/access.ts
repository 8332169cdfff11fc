import { changeGrant, changeMembership, createGroup, createRole, describeGroup, describeRole, wholeNumber, type AccessDeps } from '../core/access/admin.js';
import { systemClock } from '../core/ports.js';
import type { CliHelpers } from './event-webhooks.js';
import { parserOptions, type CommandName } from './commands.js';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** `--username`, or its short form `--user`. */
const username = (values: Record<string, unknown>) => str(values.username) ?? str(values.user);

/** `gatehouse group …` and `gatehouse role …` (src/core/access/admin.ts; the admin API and the console do the same). */
export function accessCommands(h: CliHelpers): Record<string, (args: string[]) => Promise<void>> {
  const run = async <T>(cmd: CommandName, args: string[], fn: (d: AccessDeps, values: Record<string, unknown>) => Promise<T>, out: (r: T) => [Record<string, unknown>, string]) => {
    const { values } = h.parse(args, parserOptions(cmd));
    const r = await h.withStorage(h.configFrom(values), (s) => fn({ access: s.access, users: s.users, clock: systemClock }, values));
    const [json, human] = out(r);
    h.print(Boolean(values.json), json, human);
  };
  const membership = (add: boolean) => (args: string[]) => run(add ? 'group add' : 'group remove', args,
    (d, v) => changeMembership(d, v.group, username(v), add),
    (r) => [{ group: r.group.name, username: r.user.username, changed: r.changed },
      r.changed ? `${add ? 'added' : 'removed'} ${r.user.username} ${add ? 'to' : 'from'} ${r.group.name}` : `${r.user.username} was ${add ? 'already' : 'not'} in ${r.group.name}`]);
  const grant = (on: boolean) => (args: string[]) => run(on ? 'role grant' : 'role revoke', args,
    (d, v) => changeGrant(d, v.role, { username: username(v), group: str(v.group) }, on),
    (r) => [{ role: r.role.name, [r.to.kind === 'user' ? 'username' : 'group']: r.to.name, changed: r.changed },
      r.changed ? `${on ? 'granted' : 'revoked'} ${r.role.name} ${on ? 'to' : 'from'} ${r.to.kind} ${r.to.name}` : `${r.to.kind} ${r.to.name} ${on ? 'already had' : 'did not have'} ${r.role.name}`]);
  return {
    'group create': (args) => run('group create', args, (d, v) => createGroup(d, v.name),
      (g) => [describeGroup(g), `created group ${g.name} (${g.id})`]),
    'group add': membership(true),
    'group remove': membership(false),
    'group list': (args) => run('group list', args, (d) => d.access.listGroups(),
      (gs) => [{ groups: gs.map(describeGroup) }, gs.map((g) => `${g.name}: ${g.members.map((m) => m.username).join(', ') || '(no members)'}`).join('\n') || '(no groups)']),
    'role create': (args) => run('role create', args, (d, v) => createRole(d, {
      name: v.name, approvers: str(v.approvers), approvals: wholeNumber(v.approvals, '--approvals'), maxMinutes: wholeNumber(v['max-minutes'], '--max-minutes'),
    }).then((role) => ({ role, approvers: str(v.approvers) ?? null })),
    (r) => [describeRole(r.role, r.approvers), `created role ${r.role.name} (${r.role.id})${r.approvers ? `: asked for at /account/access, ${r.role.approvals} approval(s) from ${r.approvers}, at most ${r.role.maxMinutes} minutes` : ''}`]),
    'role grant': grant(true),
    'role revoke': grant(false),
    'role list': (args) => run('role list', args, (d) => d.access.listRoles(),
      (rs) => [{ roles: rs.map((r) => describeRole(r)) }, rs.map((r) => `${r.name}: users ${r.users.map((u) => u.username).join(', ') || '-'}; groups ${r.groups.join(', ') || '-'}${r.approvers ? `; elevation approved by ${r.approvers} (${r.approvals})` : ''}`).join('\n') || '(no roles)']),
  };
}
