import { randomBytes } from 'node:crypto';
import { conflict, invalidRequest, notFound } from '../errors.js';
import type { Clock, UserStore } from '../ports.js';
import type { EventStore } from '../notify/ports.js';
import { rfc3339 } from '../notify/events.js';
import { recordEvent } from '../notify/record.js';
import { chatCallbackData, type ChatActionOutcome, type ChatActions, type ChatPress, type NotifyBotApi } from '../notify/actions.js';
import { linkedPeople } from '../oauth/device-chat.js';
import { checkClientName, quotedClientName } from '../oauth/client-name.js';
import type { AccessStore, AccessTransactions, Elevation, Role } from './ports.js';

/** callback_data prefix of the Approve/Deny buttons (src/core/notify/actions.ts). */
export const ELEVATION_ACTION = 'role';
/** A request nobody decided lapses after this long (the role is then asked for again). */
export const ELEVATION_REQUEST_TTL_MS = 15 * 60_000;

export interface ElevationDeps {
  store: AccessStore;
  /** A decision and its event commit together. */
  transactions: AccessTransactions;
  users: Pick<UserStore, 'get'>;
  events: Pick<EventStore, 'endpoints'>;
  clock: Clock;
  /** The notification bot; undefined when GATEHOUSE_NOTIFY_BOT_TOKEN is unset (nobody can be asked then). */
  bot: NotifyBotApi | undefined;
  log?: { warn(obj: object, msg: string): void };
}

export interface ElevationInput {
  role: unknown;
  minutes: unknown;
  reason: unknown;
}

const hhmm = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`;

/**
 * Elevation approved in chat (issue 28 item 5): a person asks for a role at
 * /account/access; every member of the role's approvers group with a linked
 * chat gets the request with Approve/Deny from the notification bot, whose
 * chat only Gatehouse's own chat page sees and presses (src/core/bot/notify-bot.ts);
 * `approvals` approvals of people other than the asker grant the role for the
 * minutes asked (AccessStore.approve counts each approver once, atomically),
 * one Deny refuses it. Every step's event commits with its decision.
 */
export class Elevations {
  constructor(private readonly deps: ElevationDeps) {}

  register(actions: ChatActions): void {
    actions.registerChatAction(ELEVATION_ACTION, (press) => this.press(press));
  }

  /** Roles a person may ask for: those with approvers. */
  async requestable(): Promise<Role[]> {
    return (await this.deps.store.listRoles()).filter((r) => r.approversGroupId !== null);
  }

  async request(userId: string, input: ElevationInput): Promise<{ elevation: Elevation; role: Role; asked: number }> {
    const { store, clock } = this.deps;
    const role = typeof input.role === 'string' && input.role ? await store.roleByName(input.role) : undefined;
    if (!role || !role.approversGroupId) throw notFound('there is no role by that name that can be asked for');
    const max = role.maxMinutes ?? 60;
    const minutes = typeof input.minutes === 'string' && /^\d{1,5}$/.test(input.minutes) ? Number(input.minutes) : Number.NaN;
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > max) throw invalidRequest(`minutes must be a whole number from 1 to ${max}`);
    // Shown to the approvers: the one check that keeps text from passing for Gatehouse's own words.
    const reason = checkClientName(input.reason);
    if (!('name' in reason)) throw invalidRequest('the reason is required: one line of at most 100 characters, without control characters');
    const now = clock.now();
    // Keeps a person from flooding the approvers' chats with one role (not a security boundary: approvals are).
    if ((await store.elevationsOf(userId, 20)).some((e) => e.roleId === role.id && e.state === 'waiting' && e.expiresAt > now)) {
      throw conflict('you have already asked for this role; wait for the answer');
    }
    const elevation: Elevation = {
      id: randomBytes(12).toString('base64url'), userId, roleId: role.id, minutes, reason: reason.name, state: 'waiting', approvals: 0,
      required: role.approvals, createdAt: now, expiresAt: now + ELEVATION_REQUEST_TTL_MS, decidedAt: null, until: null,
    };
    const group = await store.groupById(role.approversGroupId);
    await this.deps.transactions.transaction(async (tx) => {
      await tx.access.createElevation(elevation);
      await recordEvent(tx, 'role.requested', {
        user_id: userId, role: role.name, request_id: elevation.id, minutes, reason: elevation.reason, approvers: group?.name ?? '', approvals_required: role.approvals,
      }, now);
    });
    return { elevation, role, asked: await this.ask(elevation, role) };
  }

  /** The linked chats of a person (their personal notification endpoints). */
  private async chatsOf(userId: string): Promise<string[]> {
    return (await this.deps.events.endpoints.list({ userId })).filter((e) => e.kind === 'chat' && e.chatId && e.disabledAt === null).map((e) => e.chatId!);
  }

  /** Sends the request to every approver but the asker; how many chats got it. */
  private async ask(e: Elevation, role: Role): Promise<number> {
    const { bot, store } = this.deps;
    if (!bot || !role.approversGroupId) return 0;
    const asker = await this.deps.users.get(e.userId);
    const text = [
      `Role request: ${asker?.username ?? 'someone'} asks for the role ${role.name} for ${e.minutes} minute${e.minutes === 1 ? '' : 's'}.`,
      `Reason: ${quotedClientName(e.reason)}`,
      `${e.required} approval${e.required === 1 ? '' : 's'} needed. Approve only if you know why they need it.`,
    ].join('\n');
    const buttons = [[{ text: 'Approve', data: chatCallbackData(ELEVATION_ACTION, `a:${e.id}`) }, { text: 'Deny', data: chatCallbackData(ELEVATION_ACTION, `d:${e.id}`) }]];
    const chats = new Set<string>();
    for (const member of await store.members(role.approversGroupId)) {
      if (member === e.userId) continue;
      for (const c of await this.chatsOf(member)) chats.add(c);
    }
    let sent = 0;
    await Promise.all([...chats].map(async (chatId) => {
      try {
        await store.addMessage(e.id, chatId, await bot.send(chatId, text, buttons));
        sent++;
      } catch (err) {
        this.deps.log?.warn({ err }, 'a role request could not be sent to an approver\'s chat');
      }
    }));
    return sent;
  }

  /** Tells the asker (their linked chats) and closes every approver's message; best effort. */
  private async tell(e: Elevation, toAsker: string, closed: string): Promise<void> {
    const bot = this.deps.bot;
    if (!bot) return;
    const sends = (await this.chatsOf(e.userId)).map((c) => bot.send(c, toAsker, []));
    const edits = (await this.deps.store.messages(e.id)).map((m) => bot.edit(m.chatId, m.messageId, closed));
    for (const r of await Promise.allSettled([...sends, ...edits])) {
      if (r.status === 'rejected' && !/message is not modified/.test(String(r.reason))) this.deps.log?.warn({ err: r.reason }, 'role request: a chat message failed');
    }
  }

  private async press(press: ChatPress): Promise<ChatActionOutcome> {
    const m = /^([ad]):([A-Za-z0-9_-]{16})$/.exec(press.payload);
    const e = m ? await this.deps.store.elevation(m[2]!) : undefined;
    const role = e ? await this.deps.store.roleById(e.roleId) : undefined;
    if (!m || !e || !role?.approversGroupId) return { answer: 'This request is no longer open.' };
    const now = press.now;
    const people = [...await linkedPeople(this.deps.events, press.chatId)];
    const approvers: string[] = [];
    for (const p of people) if (p !== e.userId && (await this.deps.store.isMember(role.approversGroupId, p))) approvers.push(p);
    if (approvers.length === 0) {
      return people.includes(e.userId)
        ? { answer: 'You cannot approve your own request.', showAlert: true }
        : { answer: 'Nothing done: you are not an approver of this role.', showAlert: true };
    }
    if (e.state === 'waiting' && e.expiresAt <= now) {
      await this.expire(e, now);
      return { answer: 'This request expired.', editText: 'Role request expired: nobody decided in time.' };
    }
    const by = approvers[0]!;
    const asker = (await this.deps.users.get(e.userId))?.username ?? 'someone';
    if (m[1] === 'd') {
      const denied = await this.deps.transactions.transaction(async (tx) => {
        if (!(await tx.access.deny(e.id, by, now))) return false;
        await recordEvent(tx, 'role.denied', { user_id: e.userId, role: role.name, request_id: e.id, denied_by: by }, now);
        return true;
      });
      if (!denied) return this.closed(e.id);
      const byName = (await this.deps.users.get(by))?.username ?? 'an approver';
      await this.tell(e, `Your request for the role ${role.name} was denied by ${byName}.`, `Role request denied: ${asker} does not get ${role.name}.`);
      return { answer: 'Denied.', editText: `Role request denied: ${asker} does not get ${role.name}.` };
    }
    const outcome = await this.deps.transactions.transaction(async (tx) => {
      const o = await tx.access.approve(e.id, by, now);
      if (o.kind === 'granted') {
        await recordEvent(tx, 'role.granted', {
          user_id: e.userId, role: role.name, request_id: e.id, minutes: e.minutes, until: rfc3339(o.elevation.until!), approvals: o.elevation.approvals, approved_by: by,
        }, now);
      }
      return o;
    });
    if (outcome.kind === 'duplicate') return { answer: 'You approved this already.' };
    if (outcome.kind === 'closed') return this.closed(e.id);
    if (outcome.kind === 'counted') {
      const left = outcome.elevation.required - outcome.elevation.approvals;
      // The buttons stay: the message closes for everyone once the request is decided (tell()).
      return { answer: `Approved. ${left} more approval${left === 1 ? '' : 's'} needed.` };
    }
    const until = outcome.elevation.until!;
    await this.tell(e, `You have the role ${role.name} until ${hhmm(until)} (${e.minutes} minutes). Sign in to your apps again to use it.`,
      `Role granted: ${asker} has ${role.name} until ${hhmm(until)}.`);
    return { answer: 'Approved: the role is granted.', editText: `Role granted: ${asker} has ${role.name} until ${hhmm(until)}.` };
  }

  private async closed(id: string): Promise<ChatActionOutcome> {
    const state = (await this.deps.store.elevation(id))?.state ?? 'expired';
    return { answer: `This request was already ${state}.`, editText: `Role request ${state}.` };
  }

  /** Marks one request expired (one process records it) and tells the asker. */
  private async expire(e: Elevation, now: number): Promise<void> {
    const role = await this.deps.store.roleById(e.roleId);
    const was = await this.deps.transactions.transaction(async (tx) => {
      const w = await tx.access.expire(e.id, now);
      if (w) await recordEvent(tx, 'role.expired', { user_id: e.userId, role: role?.name ?? '', request_id: e.id, was: w === 'granted' ? 'granted' : 'requested' }, now);
      return w;
    });
    if (was === 'granted') await this.tell(e, `Your role ${role?.name ?? ''} has ended.`, `Role ${role?.name ?? ''} ended for this request.`);
    if (was === 'waiting') await this.tell(e, `Your request for the role ${role?.name ?? ''} expired: nobody decided in time.`, 'Role request expired: nobody decided in time.');
  }

  /**
   * The notification worker's sweep (src/infra/notify-worker.ts): requests
   * nobody decided and elevations past their end are marked expired and the
   * asker is told. Safe in every process at once (the conditional UPDATE
   * picks one). Tokens stop carrying an ended role at its end whether or not
   * the sweep ran (AccessStore.rolesOf). How many it looked at.
   */
  async sweep(now: number, limit = 100): Promise<number> {
    const due = await this.deps.store.dueToExpire(now, limit);
    for (const e of due) await this.expire(e, now);
    return due.length;
  }
}
