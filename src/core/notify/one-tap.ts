import type { Clock, Storage } from '../ports.js';
import { revokeApp } from '../oidc/account.js';
import { lockAccount } from '../account-lock.js';
import { sessionSid } from '../oidc/sso.js';
import { linkedPeople } from '../oauth/device-chat.js';
import { chatCallbackData, type ChatActionOutcome, type ChatActions, type ChatButton } from './actions.js';
import type { NotifyEvent } from './events.js';
import { CHAT_PAGE_CLIENT_ID } from '../bot/chat-page-client.js';

/**
 * One-tap security actions (docs/events.md, Chat notifications): the alerts a
 * person's linked chat receives carry a button that acts at once, and the
 * notification bot's `/sessions` and `/apps` list what can be ended. Every
 * press acts only for the person the chat is linked to, and only on their own
 * sessions and grants: callback_data names a thing, never whose it is, so a
 * forged one naming someone else's does nothing.
 */
export const ONE_TAP = 'tap';

/** Events recorded before they carried `sid`: the sign-in's session is the first one of that person created this soon after. */
const SESSION_AFTER_SIGN_IN_MS = 15 * 60_000;

const fits = (payload: string) => Buffer.byteLength(`${ONE_TAP}:${payload}`) <= 64;

/** The buttons of an alert in a person's own chat; undefined when it has none. */
export function oneTapButtons(e: NotifyEvent): ChatButton[][] | undefined {
  const clientId = typeof e.data.client_id === 'string' ? e.data.client_id : '';
  switch (e.type) {
    case 'user.login.succeeded':
      // The password grant starts no session (sid null): nothing to sign out.
      return e.data.sid === null ? undefined : [[{ text: 'Sign out that session', data: chatCallbackData(ONE_TAP, `so:${e.id}`) }]];
    case 'consent.granted':
    case 'device.approved':
    case 'ciba.approved':
      return clientId && fits(`ra:${clientId}`) ? [[{ text: 'Remove access', data: chatCallbackData(ONE_TAP, `ra:${clientId}`) }]] : undefined;
    case 'refresh_token.reuse_detected':
    case 'authorization_code.reuse_detected':
      return [[{ text: 'Lock my account', data: chatCallbackData(ONE_TAP, `lk:${e.id}`) }]];
    default:
      return undefined;
  }
}

export interface OneTapDeps {
  storage: Storage;
  clock: Clock;
  /** Ends one of the person's sessions with its single logout (src/core/oidc/sso.ts); undefined when it is not theirs or gone. */
  revokeSession(userId: string, sid: string): Promise<unknown>;
}

const NOT_YOURS: ChatActionOutcome = { answer: 'Nothing done: that is not one of yours, or it is already gone.', showAlert: true };

export function registerOneTapActions(actions: ChatActions, deps: OneTapDeps): void {
  const { storage, clock } = deps;

  /** The event, when it is about a person this chat is linked to. */
  const ownEvent = async (chatId: string, id: string, type: string[]) => {
    const e = /^msg_[0-9A-Z]{26}$/.test(id) ? await storage.events.get(id) : undefined;
    if (!e || !type.includes(e.type) || !e.userId) return undefined;
    return (await linkedPeople(storage.events, chatId)).has(e.userId) ? e : undefined;
  };

  const signOut = async (userId: string, sid: string): Promise<ChatActionOutcome> => {
    if (!(await deps.revokeSession(userId, sid))) return NOT_YOURS;
    return { answer: 'Signed out.', editText: 'Done: that session is signed out.' };
  };

  actions.registerChatAction(ONE_TAP, async (press) => {
    const [action, arg = ''] = [press.payload.slice(0, 2), press.payload.slice(3)];
    const people = await linkedPeople(storage.events, press.chatId);
    if (people.size === 0) return NOT_YOURS;
    switch (action) {
      case 'so': {
        const e = await ownEvent(press.chatId, arg, ['user.login.succeeded']);
        if (!e) return NOT_YOURS;
        // The session the sign-in began, by its public id (docs/events.md); the button names the event, the event names the session.
        if (typeof e.data.sid === 'string') return signOut(e.userId!, e.data.sid);
        if (e.data.sid === null) return NOT_YOURS;
        const sessions = (await storage.sessions.listForUser(e.userId!, clock.now()))
          .filter((s) => s.createdAt >= e.createdAt - 1000 && s.createdAt <= e.createdAt + SESSION_AFTER_SIGN_IN_MS)
          .sort((a, b) => a.createdAt - b.createdAt);
        return sessions[0] ? signOut(e.userId!, sessionSid(sessions[0])) : NOT_YOURS;
      }
      case 'ss': {
        // From /sessions: a session id, ended only if it is one of this chat's person's.
        for (const userId of people) {
          if (/^[A-Za-z0-9_-]{1,64}$/.test(arg) && (await deps.revokeSession(userId, arg))) return { answer: 'Signed out.', editText: 'Done: that session is signed out.' };
        }
        return NOT_YOURS;
      }
      case 'ra': {
        for (const userId of people) {
          if (arg.length <= 255 && (await revokeApp({ storage, clock }, userId, arg))) {
            const name = (await storage.clients.get(arg))?.name ?? 'The app';
            return { answer: 'Access removed.', editText: `Done: ${name} no longer has access to your account.` };
          }
        }
        return NOT_YOURS;
      }
      case 'lk': {
        const e = await ownEvent(press.chatId, arg, ['refresh_token.reuse_detected', 'authorization_code.reuse_detected']);
        // Whoever replayed the token may hold others and a session: the lock ends them all, in one transaction.
        const now = clock.now();
        if (!e || !(await storage.transaction((tx) => lockAccount(tx, e.userId!, { by: 'one_tap' }, now)))) return NOT_YOURS;
        return { answer: 'Account locked.', editText: 'Done: your account is locked and signed out everywhere. An administrator can unlock it.' };
      }
      default:
        return NOT_YOURS;
    }
  });

  actions.registerChatCommand('sessions', async (chatId) => {
    const rows: ChatButton[][] = [];
    const lines: string[] = [];
    for (const userId of await linkedPeople(storage.events, chatId)) {
      for (const s of await storage.sessions.listForUser(userId, clock.now())) {
        const when = new Date(s.createdAt).toISOString().replace('T', ' ').slice(0, 16);
        const label = `${when} UTC${s.userAgent ? ` · ${s.userAgent.slice(0, 60)}` : ''}`;
        // Numbered, newest first: two sessions begun in the same minute still have buttons told apart.
        const n = lines.length + 1;
        lines.push(`${n}. ${label}`);
        rows.push([{ text: `Sign out ${n} (${when})`, data: chatCallbackData(ONE_TAP, `ss:${sessionSid(s)}`) }]);
      }
    }
    if (!lines.length) return { text: 'No signed-in sessions (or this chat is not linked: send /start).' };
    return { text: `Your signed-in sessions:\n${lines.join('\n')}`, buttons: rows.slice(0, 20) };
  });

  actions.registerChatCommand('apps', async (chatId) => {
    const rows: ChatButton[][] = [];
    const lines: string[] = [];
    for (const userId of await linkedPeople(storage.events, chatId)) {
      for (const c of await storage.consents.listForUser(userId)) {
        const client = await storage.clients.get(c.clientId);
        // Gatehouse's own chat page is where this list is read: removing it from here would sign the person out of the chat they act in.
        if (!client || c.clientId === CHAT_PAGE_CLIENT_ID || !fits(`ra:${c.clientId}`)) continue;
        lines.push(`• ${client.name}: ${c.scope.join(' ') || 'sign-in only'}`);
        rows.push([{ text: `Remove ${client.name.slice(0, 40)}`, data: chatCallbackData(ONE_TAP, `ra:${c.clientId}`) }]);
      }
    }
    if (!lines.length) return { text: 'No applications have access to your account (or this chat is not linked: send /start).' };
    return { text: `Applications with access to your account:\n${lines.join('\n')}`, buttons: rows.slice(0, 20) };
  });
}
