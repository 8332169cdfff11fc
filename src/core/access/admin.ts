import { randomUUID } from 'node:crypto';
import { conflict, invalidRequest, notFound } from '../errors.js';
import type { Clock, UserStore } from '../ports.js';
import type { AccessStore, Group, GroupWithMembers, Role, RoleWithGrants } from './ports.js';

/**
 * Groups and roles as the command line, the admin API and the console change
 * them: one function each, so the three surfaces check the same things.
 * Names travel in tokens (`groups`, `roles` claims) and chat messages, so they
 * are short and plain: letters, digits, `.`, `_`, `:`, `-`.
 */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
/** Approvals an elevation may need, and how long one may last (minutes; a day at most). */
export const MAX_APPROVALS = 10;
export const MAX_ELEVATION_MINUTES = 1440;
/** A role with approvers and no --max-minutes: held for at most an hour. */
export const DEFAULT_MAX_MINUTES = 60;

export interface AccessDeps {
  access: AccessStore;
  users: Pick<UserStore, 'findByUsername'>;
  clock: Clock;
}

function checkName(kind: 'group' | 'role', name: unknown): string {
  if (typeof name !== 'string' || !NAME.test(name)) throw invalidRequest(`${kind} name: 1–64 letters, digits, dot, dash, colon or underscore, starting with a letter or digit`);
  return name;
}

async function groupNamed(d: AccessDeps, name: unknown): Promise<Group> {
  const g = typeof name === 'string' && name ? await d.access.groupByName(name) : undefined;
  if (!g) throw notFound(`there is no group ${String(name ?? '')}`);
  return g;
}

async function roleNamed(d: AccessDeps, name: unknown): Promise<Role> {
  const r = typeof name === 'string' && name ? await d.access.roleByName(name) : undefined;
  if (!r) throw notFound(`there is no role ${String(name ?? '')}`);
  return r;
}

async function userNamed(d: AccessDeps, username: unknown): Promise<{ id: string; username: string }> {
  const u = typeof username === 'string' && username ? await d.users.findByUsername(username) : undefined;
  if (!u) throw notFound(`there is no user ${String(username ?? '')}`);
  return { id: u.id, username: u.username };
}

export async function createGroup(d: AccessDeps, name: unknown): Promise<Group> {
  const group: Group = { id: randomUUID(), name: checkName('group', name), createdAt: d.clock.now() };
  if (!(await d.access.createGroup(group))) throw conflict(`a group named ${group.name} exists already`);
  return group;
}

/** Adds (or removes) a person; false when they were a member already (or were not one). */
export async function changeMembership(d: AccessDeps, groupName: unknown, username: unknown, add: boolean): Promise<{ group: Group; user: { id: string; username: string }; changed: boolean }> {
  const group = await groupNamed(d, groupName);
  const user = await userNamed(d, username);
  const changed = add ? await d.access.addMember(group.id, user.id, d.clock.now()) : await d.access.removeMember(group.id, user.id);
  return { group, user, changed };
}

export interface RoleInput {
  name: unknown;
  /** A group whose members approve elevations to this role. */
  approvers?: string | undefined;
  approvals?: number | undefined;
  maxMinutes?: number | undefined;
}

const intIn = (v: number | undefined, what: string, min: number, max: number): number | undefined => {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min || v > max) throw invalidRequest(`${what} must be a whole number from ${min} to ${max}`);
  return v;
};

/** A number given as text (the command line, a form); malformed is invalid_request. */
export function wholeNumber(v: unknown, what: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number') return v;
  if (typeof v !== 'string' || !/^\d{1,6}$/.test(v)) throw invalidRequest(`${what} must be a whole number`);
  return Number(v);
}

export async function createRole(d: AccessDeps, input: RoleInput): Promise<Role> {
  const name = checkName('role', input.name);
  const approvals = intIn(input.approvals, 'approvals', 1, MAX_APPROVALS);
  const maxMinutes = intIn(input.maxMinutes, 'max minutes', 1, MAX_ELEVATION_MINUTES);
  if (!input.approvers && (approvals !== undefined || maxMinutes !== undefined)) throw invalidRequest('approvals and max minutes apply only to a role with approvers');
  const approvers = input.approvers ? await groupNamed(d, input.approvers) : undefined;
  const role: Role = {
    id: randomUUID(), name, approversGroupId: approvers?.id ?? null, approvals: approvals ?? 1,
    maxMinutes: approvers ? maxMinutes ?? DEFAULT_MAX_MINUTES : null, createdAt: d.clock.now(),
  };
  if (!(await d.access.createRole(role))) throw conflict(`a role named ${name} exists already`);
  return role;
}

/** `--username U` or `--group G`: exactly one. */
export interface GranteeInput {
  username?: string | undefined;
  group?: string | undefined;
}

/** Grants (or revokes) a role; false when it was granted already (or was not granted). */
export async function changeGrant(d: AccessDeps, roleName: unknown, to: GranteeInput, grant: boolean): Promise<{ role: Role; to: { kind: 'user' | 'group'; name: string }; changed: boolean }> {
  if ((to.username ? 1 : 0) + (to.group ? 1 : 0) !== 1) throw invalidRequest('give exactly one of a username and a group');
  const role = await roleNamed(d, roleName);
  const grantee = to.username
    ? { kind: 'user' as const, ...await userNamed(d, to.username).then((u) => ({ id: u.id, name: u.username })) }
    : { kind: 'group' as const, ...await groupNamed(d, to.group).then((g) => ({ id: g.id, name: g.name })) };
  const changed = grant ? await d.access.grant(role.id, grantee, d.clock.now()) : await d.access.revoke(role.id, grantee);
  return { role, to: { kind: grantee.kind, name: grantee.name }, changed };
}

/** The JSON shapes of the command line and the admin API (shared/INTERFACE.md). */
export const describeGroup = (g: Group | GroupWithMembers) => ({
  id: g.id, name: g.name, ...('members' in g ? { members: g.members.map((m) => m.username) } : {}),
});

export function describeRole(r: Role | RoleWithGrants, approversName?: string | null): Record<string, unknown> {
  const approvers = 'approvers' in r ? r.approvers : approversName ?? null;
  return {
    id: r.id, name: r.name,
    ...(approvers ? { approvers, approvals: r.approvals, max_minutes: r.maxMinutes } : {}),
    ...('users' in r ? { users: r.users.map((u) => u.username), groups: r.groups } : {}),
  };
}
