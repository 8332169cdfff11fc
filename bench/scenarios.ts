import type autocannon from 'autocannon';
import { loginForm, mintCodes, mintRefreshTokens, PKCE_VERIFIER, signIn, chatToken, createBot, type GatehouseUnderTest } from './gatehouse.js';
import { wakeupLatency, webhookDelivery, webhookDrain } from './latency.js';
import { callbackRoundTrip, sendPhotoLoad } from './callbacks.js';
import type { Figures, Load, LoadOptions } from './load.js';
import type { PeerUnderTest } from './peer.js';
import { ProofMaker, withProofs } from './dpop.js';
import { backchannelScenarios } from './backchannel.js';
import { codeRolesScenario } from './accounts.js';
import { approvalLatency } from './approval.js';
import type { Child } from './procs.js';

export interface Scenario {
  id: string;
  label: string;
  /** The server process answering, for its CPU figures. */
  pid: number | undefined;
  /** The row this one is divided by as its ceiling (default: the bare Fastify route). */
  ceiling?: string;
  /** The peer's row for the same work, when the peer measures it. */
  peer?: string;
  /** Runs before each measurement of the scenario; returns what to send. */
  prepare?(): Promise<Load>;
  /** Scenarios with a client of their own (latency): the whole measurement. */
  run?(load: LoadOptions): Promise<Figures>;
}

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

export interface Server {
  url: string;
  pid: number | undefined;
}

/**
 * The ceilings: a bare Node `http` server and a bare Fastify route, each
 * answering a small JSON, and Fastify answering a token-shaped POST.
 */
export function ceilingScenarios(servers: { http: Server; fastify: Server; fastifyForm: Server }): Scenario[] {
  const { http, fastify, fastifyForm } = servers;
  return [
    { id: 'http', label: 'bare node:http (GET, small JSON)', pid: http.pid, prepare: async () => ({ url: `${http.url}/` }) },
    { id: 'fastify', label: 'bare Fastify route (GET, small JSON): the ceiling of every row that names no other, measured first and last (fastify-end)', pid: fastify.pid, prepare: async () => ({ url: `${fastify.url}/` }) },
    {
      id: 'fastify-form',
      label: 'Fastify + @fastify/formbody, POST form in, token-sized JSON out with no-store headers: the token endpoint\'s shape without its work',
      pid: fastifyForm.pid,
      prepare: async () => ({ url: `${fastifyForm.url}/oauth/token`, method: 'POST', headers: { 'content-type': FORM }, body: 'grant_type=client_credentials' }),
    },
  ];
}

/**
 * A pool of single-use values (refresh tokens, codes) consumed one per
 * request; refresh responses put the next refresh token back. A request
 * that finds the pool empty sends a bad value: the 400 shows up as non-2xx
 * rather than stalling the run.
 */
function poolRequest(path: string, headers: Record<string, string>, pool: string[], body: (v: string) => string, next?: (json: Record<string, unknown>) => string | undefined): autocannon.Request {
  return {
    method: 'POST' as const,
    path,
    headers,
    setupRequest: (req) => ({ ...req, body: body(encodeURIComponent(pool.pop() ?? 'exhausted')) }),
    onResponse: (status: number, resBody: string) => {
      if (status !== 200 || !next) return;
      const v = next(JSON.parse(resBody) as Record<string, unknown>);
      if (v) pool.push(v);
    },
  };
}

/** Refresh with rotation (RFC 9700 §4.14.2): each answer's refresh token goes back into the pool. */
function refreshLoad(url: string, path: string, basic: string, pool: string[]): Load {
  const headers = { authorization: basic, 'content-type': FORM };
  return {
    url: `${url}${path}`,
    method: 'POST',
    headers,
    requests: [poolRequest(path, headers, pool, (v) => `grant_type=refresh_token&refresh_token=${v}`, (j) => j.refresh_token as string | undefined)],
  };
}

/** The Gatehouse scenarios on one database. */
export function gatehouseScenarios(gh: GatehouseUnderTest, load: LoadOptions): Scenario[] {
  const post = (path: string, basic: string, body: string): Load => ({
    url: `${gh.url}${path}`,
    method: 'POST',
    headers: { authorization: basic, 'content-type': FORM },
    body,
  });
  const pid = gh.child.proc.pid;
  // Warm-up and measured run each strand at most `connections` tokens of a rotating pool.
  const spare = 2 * load.connections + 8;
  const refreshPool: string[] = [];
  const codes: string[] = [];
  // A first guess above what the exchange does on this machine (about 11,000/s on SQLite): a pool that runs dry turns the rest of the run into fast 400s.
  let codeRate = 16000;
  let poolAfterTopUp: number | undefined;
  let session: string | undefined;
  let bot: { token: string; chatId: number } | undefined;
  const out: Scenario[] = [
    { id: 'cc', label: 'client_credentials, JWT client (client_secret_basic)', pid, peer: 'peer-cc', prepare: async () => post('/oauth/token', gh.ccJwt.basic, 'grant_type=client_credentials') },
    { id: 'cc-opaque', label: 'client_credentials, opaque client (stored token)', pid, peer: 'peer-cc-opaque', prepare: async () => post('/oauth/token', gh.ccOpaque.basic, 'grant_type=client_credentials') },
    {
      id: 'cc-dpop',
      label: 'client_credentials, JWT client, a new DPoP proof per request (RFC 9449: proof checked, its jti stored, token bound by cnf.jkt); vs ceiling: share of the `cc` row',
      pid,
      ceiling: 'cc',
      prepare: async () => withProofs({ ...post('/oauth/token', gh.ccJwt.basic, 'grant_type=client_credentials'), method: 'POST' }, '/oauth/token', `${gh.url}/oauth/token`, new ProofMaker()),
    },
    {
      id: 'code',
      label: 'authorization-code exchange: code + PKCE (S256) → JWT access token and refresh token, codes minted beforehand through the authorization endpoint',
      pid,
      async prepare() {
        session ??= await signIn(gh, gh.user);
        // Enough for the warm-up and the measured run at the previous run's pace (a guess the first time), with room to spare.
        if (poolAfterTopUp !== undefined) codeRate = Math.max(1000, (poolAfterTopUp - codes.length) / (load.warmup + load.duration));
        const want = Math.ceil(codeRate * (load.warmup + load.duration) * 1.3) + spare;
        if (codes.length < want) codes.push(...(await mintCodes(gh, session, want - codes.length)));
        poolAfterTopUp = codes.length;
        const headers = { authorization: gh.webApp.basic, 'content-type': FORM };
        const redirect = encodeURIComponent(gh.webApp.redirectUri);
        const path = '/oauth/token';
        return {
          url: `${gh.url}${path}`, method: 'POST', headers,
          requests: [poolRequest(path, headers, codes, (c) => `grant_type=authorization_code&code=${c}&redirect_uri=${redirect}&code_verifier=${PKCE_VERIFIER}`)],
        };
      },
    },
    {
      id: 'refresh',
      label: 'refresh_token with rotation (JWT access token, opaque refresh token)',
      pid,
      peer: 'peer-refresh',
      async prepare() {
        if (refreshPool.length < spare) refreshPool.push(...(await mintRefreshTokens(gh, spare - refreshPool.length)));
        return refreshLoad(gh.url, '/oauth/token', gh.refresher.basic, refreshPool);
      },
    },
    { id: 'introspect', label: 'introspection of a JWT access token (POST /oauth/check_token)', pid, peer: 'peer-introspect', prepare: async () => post('/oauth/check_token', gh.introspector.basic, `token=${gh.jwt}`) },
    { id: 'introspect-opaque', label: 'introspection of an opaque access token (a stored-token lookup)', pid, peer: 'peer-introspect', prepare: async () => post('/oauth/check_token', gh.introspector.basic, `token=${gh.opaque}`) },
  ];
  // Device authorization and CIBA: a client polling while its person decides.
  out.push(...backchannelScenarios(gh, load, pid));
  out.push(codeRolesScenario(gh, load));
  if (gh.apiUrl) {
    out.push(
      { id: 'api-healthz', label: 'the resource server\'s own GET /healthz (same process, no token): the ceiling of `user`', pid, prepare: async () => ({ url: `${gh.apiUrl}/healthz` }) },
      { id: 'user', label: 'GET {api_url}/user with a user\'s JWT, verified locally (GATEHOUSE_TOKEN_VERIFICATION=local)', pid, ceiling: 'api-healthz', prepare: async () => ({ url: `${gh.apiUrl}/user`, headers: { authorization: `Bearer ${gh.userJwt}` } }) },
      {
        id: 'user-dpop',
        label: 'GET {api_url}/user with a DPoP-bound user JWT and a new proof per request (htm, htu, ath, jti stored); vs ceiling: share of the `user` row',
        pid,
        ceiling: 'user',
        async prepare() {
          const proofs = new ProofMaker();
          const token = await dpopUserToken(gh, proofs);
          const url = `${gh.apiUrl}/user`;
          return withProofs({ url, method: 'GET', headers: { authorization: `DPoP ${token}` } }, '/user', url, proofs, token);
        },
      },
    );
  }
  out.push({
    id: 'login',
    label: 'password login through the login form (argon2id m=19 MiB, t=2, p=1), 16 accounts in turn, 16 connections',
    pid,
    async prepare() {
      const { cookie, csrf } = await loginForm(gh);
      let i = 0;
      const headers = { cookie, 'content-type': FORM };
      return {
        url: `${gh.url}/login`,
        method: 'POST',
        headers,
        connections: 16,
        okStatus: 303,
        requests: [{
          method: 'POST',
          path: '/login',
          headers,
          setupRequest: (req) => {
            const a = gh.loginUsers[i++ % gh.loginUsers.length]!;
            return { ...req, body: new URLSearchParams({ csrf_token: csrf, username: a.username, password: a.password, return_to: '/' }).toString() };
          },
        }],
      };
    },
  });
  if (gh.botUrl) {
    out.push(
      {
        id: 'send',
        label: 'Bot API sendMessage (JSON, plain text) to a person\'s chat, flood control off',
        pid,
        async prepare() {
          bot ??= await botWithChat(gh);
          return {
            url: `${gh.botUrl}/bot${bot.token}/sendMessage`,
            method: 'POST',
            headers: { 'content-type': JSON_TYPE },
            body: JSON.stringify({ chat_id: bot.chatId, text: 'Your sign-in code is 123456. It expires in 10 minutes.' }),
          };
        },
      },
      {
        id: 'wakeup',
        label: 'getUpdates wake-up: a bot long-polls while 8 people post ~1,000 messages/s through the chat client API; p50/p99 from sending the post to reading the getUpdates answer with it (req/s: messages received)',
        pid,
        run: (l) => wakeupLatency(gh, l, { rate: 1000, people: 8 }),
      },
      {
        id: 'wakeup-200',
        label: 'the same at 200 messages/s: the wake-up when the server is not near saturation',
        pid,
        run: (l) => wakeupLatency(gh, l, { rate: 200, people: 8 }),
      },
      {
        id: 'callback',
        label: 'callback round trip at ~1,000 presses/s from 8 people: POST /client/chats/<bot>/callback → the bot\'s getUpdates (long poll) → answerCallbackQuery → the press\'s answer; p50/p99 of the press (req/s: presses answered)',
        pid,
        run: (l) => callbackRoundTrip(gh, l, 1000),
      },
      {
        id: 'callback-200',
        label: 'the same at 200 presses/s',
        pid,
        run: (l) => callbackRoundTrip(gh, l, 200),
      },
      {
        id: 'send-photo',
        label: 'Bot API sendPhoto, multipart upload of a 100 KB PNG to a person\'s chat (stored, its size read from the header), flood control off',
        pid,
        async prepare() {
          bot ??= await botWithChat(gh);
          return sendPhotoLoad(gh, bot);
        },
      },
    );
  }
  return out;
}

/** A user's access token bound to `proofs`' key, by the password grant with a proof (RFC 9449 §5). */
async function dpopUserToken(gh: GatehouseUnderTest, proofs: ProofMaker): Promise<string> {
  const res = await fetch(`${gh.url}/oauth/token`, {
    method: 'POST',
    headers: { authorization: gh.refresher.basic, 'content-type': FORM, dpop: proofs.proof('POST', `${gh.url}/oauth/token`) },
    body: new URLSearchParams({ grant_type: 'password', username: gh.user.username, password: gh.user.password, scope: 'user' }),
  });
  const body = (await res.json()) as { access_token?: string; token_type?: string };
  if (res.status !== 200 || body.token_type !== 'DPoP' || !body.access_token) throw new Error(`DPoP token request: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A bot and the chat a person opened with it (the person writes first, as on Telegram). */
async function botWithChat(gh: GatehouseUnderTest): Promise<{ token: string; chatId: number }> {
  const token = await createBot(gh, gh.user.username, `send_${Date.now().toString(36)}_bot`);
  const me = (await (await fetch(`${gh.botUrl}/bot${token}/getMe`)).json()) as { result: { username: string } };
  const person = await chatToken(gh, gh.loginUsers[0]!);
  const res = await fetch(`${gh.botUrl}/client/chats/${me.result.username}/messages`, {
    method: 'POST', headers: { authorization: `Bearer ${person}`, 'content-type': JSON_TYPE }, body: JSON.stringify({ text: '/start' }),
  });
  if (res.status !== 200) throw new Error(`chat client API: ${res.status} ${await res.text()}`);
  const updates = (await (await fetch(`${gh.botUrl}/bot${token}/getUpdates`)).json()) as { result: { message: { chat: { id: number } } }[] };
  const chatId = updates.result[0]?.message.chat.id;
  if (chatId === undefined) throw new Error('the bot saw no message');
  return { token, chatId };
}

/**
 * Webhook delivery. `webhooks`: on a Gatehouse running the auth and worker
 * roles in one process (started apart: its events slow the token endpoint).
 * `webhooks-max`: `feed` (the auth role alone) fills the outbox, then a
 * worker process of its own drains it (bench/latency.ts, webhookDrain).
 */
export function webhookScenarios(gh: GatehouseUnderTest, receiverUrl: string, feed?: { gh: GatehouseUnderTest; startWorker: () => Promise<Child> }): Scenario[] {
  const pid = gh.child.proc.pid;
  return [
    {
      id: 'webhooks',
      label: 'webhook deliveries (token.issued, signed) to a local receiver, events offered at 2,000/s by client_credentials requests; p50/p99: event committed → arrival (req/s: deliveries; CPU per delivery includes the token request)',
      pid,
      run: (l) => webhookDelivery(gh, receiverUrl, l, 2000),
    },
    ...(feed ? [{
      id: 'webhooks-max',
      label: 'webhook deliveries flat out by the worker role in a process of its own: events produced for the measured seconds by client_credentials requests to another process (auth role) with no worker running, then a worker started and the outbox drained; req/s: deliveries from first to last arrival; CPU per delivery: the worker\'s; p50/p99 include the backlog\'s wait',
      pid: feed.gh.child.proc.pid,
      run: (l: LoadOptions) => webhookDrain(feed.gh, receiverUrl, l, feed.startWorker),
    }] : []),
  ];
}

/**
 * client_credentials on a Gatehouse (auth role, no worker) with an endpoint
 * subscribed to token.issued: every token records its event in the outbox.
 * Divided by the `cc` row of the same database, it is the recording's cost.
 */
export function subscribedScenarios(gh: GatehouseUnderTest): Scenario[] {
  return [{
    id: 'cc-subscribed',
    label: 'client_credentials, JWT client, with an endpoint subscribed to token.issued (each token records its event; no worker in that process); vs ceiling: share of the `cc` row',
    pid: gh.child.proc.pid,
    ceiling: 'cc',
    peer: 'peer-cc',
    prepare: async () => ({
      url: `${gh.url}/oauth/token`, method: 'POST', headers: { authorization: gh.ccJwt.basic, 'content-type': FORM }, body: 'grant_type=client_credentials',
    }),
  }];
}

/** Sign-in approval in chat, on a Gatehouse with the notification bot and worker (started apart: bench/approval.ts). */
export function approvalScenarios(gh: GatehouseUnderTest): Scenario[] {
  return [{
    id: 'approval',
    label: 'sign-in approval in chat with number matching: from the press of the right number (POST /client/chats/<bot>/callback) to the waiting second-step page\'s long poll answering approved; p50/p99, sign-ins one at a time (req/s: sign-ins; CPU per sign-in includes the password\'s argon2)',
    pid: gh.child.proc.pid,
    run: (l) => approvalLatency(gh, l),
  }];
}

/** node-oidc-provider doing the same work (in-memory adapter). */
export function peerScenarios(peer: PeerUnderTest, load: LoadOptions): Scenario[] {
  const pid = peer.child.proc.pid;
  const post = (basic: string, path: string, body: string): Load => ({ url: `${peer.url}${path}`, method: 'POST', headers: { authorization: basic, 'content-type': FORM }, body });
  const pool: string[] = [];
  const spare = 2 * load.connections + 8;
  let token: string | undefined;
  return [
    { id: 'peer-cc', label: `node-oidc-provider: client_credentials, JWT access token (ES256)`, pid, prepare: async () => post(peer.ccJwt.basic, '/token', 'grant_type=client_credentials') },
    { id: 'peer-cc-opaque', label: 'node-oidc-provider: client_credentials, opaque access token (stored in its memory adapter)', pid, prepare: async () => post(peer.ccOpaque.basic, '/token', 'grant_type=client_credentials') },
    {
      id: 'peer-introspect',
      label: 'node-oidc-provider: introspection of an opaque access token (it refuses to introspect its JWT access tokens)',
      pid,
      async prepare() {
        // Its memory adapter is an LRU of 1,000 entries: a token minted now is still there.
        token = await peer.opaqueToken();
        return post(peer.introspector.basic, '/token/introspection', `token=${token}`);
      },
    },
    {
      id: 'peer-refresh',
      label: 'node-oidc-provider: refresh_token with rotation (rotateRefreshToken: true), JWT access token',
      pid,
      async prepare() {
        pool.length = 0;
        pool.push(...(await peer.mintRefreshTokens(spare)));
        return refreshLoad(peer.url, '/token', peer.refresher.basic, pool);
      },
    },
  ];
}

export const SCENARIO_IDS = ['http', 'fastify', 'fastify-form', 'cc', 'cc-subscribed', 'cc-opaque', 'cc-dpop', 'code', 'code-roles', 'refresh', 'introspect', 'introspect-opaque', 'device-poll', 'ciba-poll', 'api-healthz', 'user', 'user-dpop', 'login', 'send', 'wakeup', 'wakeup-200', 'callback', 'callback-200', 'send-photo', 'approval', 'signup', 'reset', 'reset-unknown',
  'webhooks', 'webhooks-max', 'startup', 'peer-cc', 'peer-cc-opaque', 'peer-introspect', 'peer-refresh'] as const;
