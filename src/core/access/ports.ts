import type { Transactional } from '../ports.js';
import type { Recorder } from '../notify/record.js';

/** A named set of people (issue 28): released as the `groups` claim, granted roles, approving elevations. */
export interface Group {
  id: string;
  name: string;
  createdAt: number;
}

export interface Member {
  id: string;
  username: string;
}

export interface GroupWithMembers extends Group {
  members: Member[];
}

/**
 * A role: granted to people and groups, released as the `roles` claim. With
 * `approversGroupId` it may also be asked for at /account/access and is held
 * once `approvals` members of that group other than the asker approve, for
 * at most `maxMinutes` (elevation approved in chat).
 */
export interface Role {
  id: string;
  name: string;
  approversGroupId: string | null;
  approvals: number;
  maxMinutes: number | null;
  createdAt: number;
}

export interface RoleWithGrants extends Role {
  /** The approvers' group name, when there is one. */
  approvers: string | null;
  users: Member[];
  groups: string[];
}

/** Who a role is granted to. */
export type Grantee = { kind: 'user' | 'group'; id: string };

export type ElevationState = 'waiting' | 'granted' | 'denied' | 'expired';

/** A request to hold a role for a while, and what became of it. */
export interface Elevation {
  id: string;
  userId: string;
  roleId: string;
  minutes: number;
  reason: string;
  state: ElevationState;
  /** Approvals counted so far, and how many grant it. */
  approvals: number;
  required: number;
  createdAt: number;
  /** While waiting: when the request lapses unanswered. */
  expiresAt: number;
  decidedAt: number | null;
  /** Once granted: when the role ends (the grant's time plus `minutes`). */
  until: number | null;
}

/** What one approver's press did. */
export type ApproveOutcome =
  | { kind: 'counted' | 'granted'; elevation: Elevation }
  /** This approver was counted already. */
  | { kind: 'duplicate' }
  /** Not waiting any more (decided or lapsed), or the asker's own. */
  | { kind: 'closed' };

export interface AccessStore {
  /** False when the name (any case) is taken. */
  createGroup(group: Group): Promise<boolean>;
  groupByName(name: string): Promise<Group | undefined>;
  groupById(id: string): Promise<Group | undefined>;
  listGroups(): Promise<GroupWithMembers[]>;
  /** False when already a member. */
  addMember(groupId: string, userId: string, now: number): Promise<boolean>;
  /** False when not a member. */
  removeMember(groupId: string, userId: string): Promise<boolean>;
  isMember(groupId: string, userId: string): Promise<boolean>;
  /** The members' user ids. */
  members(groupId: string): Promise<string[]>;

  /** False when the name (any case) is taken. */
  createRole(role: Role): Promise<boolean>;
  roleByName(name: string): Promise<Role | undefined>;
  roleById(id: string): Promise<Role | undefined>;
  listRoles(): Promise<RoleWithGrants[]>;
  /** False when already granted to them. */
  grant(roleId: string, to: Grantee, now: number): Promise<boolean>;
  /** False when it was not granted to them. */
  revoke(roleId: string, from: Grantee): Promise<boolean>;

  /** The names of the person's groups, sorted. */
  groupsOf(userId: string): Promise<string[]>;
  /** The names of the person's roles, sorted: granted to them, to one of their groups, or by an elevation granted and not past `until` at `now`. */
  rolesOf(userId: string, now: number): Promise<string[]>;

  createElevation(e: Elevation): Promise<void>;
  elevation(id: string): Promise<Elevation | undefined>;
  /** The person's latest requests, newest first. */
  elevationsOf(userId: string, limit: number): Promise<Elevation[]>;
  /**
   * Counts `approverId`'s approval of a waiting, unlapsed request that is not
   * theirs, once per approver, and grants it (until now + minutes) when the
   * count reaches `required`: one conditional INSERT and one conditional
   * UPDATE of the request row, so concurrent presses each count once and
   * exactly one of them grants. Call it inside a transaction with the event.
   */
  approve(id: string, approverId: string, now: number): Promise<ApproveOutcome>;
  /** Waiting, unlapsed and not the approver's own → denied; true for exactly one caller. */
  deny(id: string, approverId: string, now: number): Promise<boolean>;
  /**
   * Marks a request expired once it is past its time: a waiting one past
   * `expiresAt`, a granted one past `until`. What it was, for exactly one
   * caller; undefined when there was nothing to do.
   */
  expire(id: string, now: number): Promise<'waiting' | 'granted' | undefined>;
  /** Requests `expire` would act on at `now`, oldest first. */
  dueToExpire(now: number, limit: number): Promise<Elevation[]>;
  /** An approver's chat message about the request (edited once it is decided). */
  addMessage(id: string, chatId: string, messageId: number): Promise<void>;
  messages(id: string): Promise<{ chatId: string; messageId: number }[]>;
}

/** An elevation's decision and its event, in one transaction. */
export interface AccessTxStores {
  access: AccessStore;
  events: Recorder;
}

export type AccessTransactions = Transactional<AccessTxStores>;
