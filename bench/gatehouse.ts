import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { jsonField, onCleanup, startChild, type Child } from './procs.js';

export type DbKind = 'sqlite' | 'postgres';
export const PG_URL = process.env.GATEHOUSE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export const GATEHOUSE_BIN = fileURLToPath(new URL('../bin/gatehouse.mjs', import.meta.url));

export interface ClientCreds {
  id: string;
  secret: string;
  /** RFC 6749 §2.3.1 client_secret_basic header value. */
  basic: string;
}

export interface Account {
  username: string;
  password: string;
}

/** A Gatehouse child process and the fixtures the scenarios use. */
export interface GatehouseUnderTest {
  db: DbKind;
  databaseUrl: string;
  url: string;
  /** The resource server ({api_url}) and the chat-bot interface, when those roles run. */
  apiUrl: string | undefined;
  botUrl: string | undefined;
  child: Child;
  adminToken: string;
  bin: string;
  ccJwt: ClientCreds;
  ccOpaque: ClientCreds;
  introspector: ClientCreds;
  refresher: ClientCreds;
  /** A trusted (no consent page) confidential web app: authorization code + PKCE, refresh. */
  webApp: ClientCreds & { redirectUri: string };
  /** A first-party app that signs people in to chat (password grant, scope chat). */
  chatApp: ClientCreds;
  user: Account;
  /** Accounts for the login scenario (its rate limits are per username and per address). */
  loginUsers: Account[];
  /** A client_credentials JWT and an opaque token to introspect. */
  jwt: string;
  opaque: string;
  /** A user's JWT with scope `user`, for {api_url}/user. */
  userJwt: string;
}

export interface StartOptions {
  nodeFlags?: string[];
  bin?: string;
  /** Default: the authorization server, the resource server and the chat-bot interface. */
  roles?: string;
  env?: Record<string, string>;
  /** An existing database (the seeded one) instead of a fresh one. */
  databaseUrl?: string;
  /** Register only the client_credentials and introspection fixtures (cheap restarts). */
  minimal?: boolean;
  /** GATEHOUSE_WORKERS (`1`, a number, `auto`): processes serving HTTP. */
  workers?: string;
  /** Make the notification bot (NOTIFY_BOT) with the CLI first and start with its GATEHOUSE_NOTIFY_BOT_TOKEN. */
  notifyBot?: boolean;
}

/** The notification bot's username when `notifyBot` is set. */
export const NOTIFY_BOT = 'gatehouse_notify_bot';

export async function postgresReachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

/** A SQLite file in a temp dir, or a fresh PostgreSQL schema; both are removed by `stopAll`. */
export async function freshDatabase(db: DbKind): Promise<string> {
  if (db === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'gh-bench-'));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    return `sqlite:${join(dir, 'gatehouse.db')}`;
  }
  const schema = `gh_bench_${randomBytes(6).toString('hex')}`;
  onCleanup(async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try {
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await c.end();
    }
  });
  return `${PG_URL}?schema=${schema}`;
}

export const basicAuth = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

export async function call(url: string, init: RequestInit & { expect?: number }): Promise<Record<string, unknown>> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (res.status !== (init.expect ?? 200)) throw new Error(`${init.method ?? 'GET'} ${new URL(url).pathname}: ${res.status} ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** POST /oauth/token as a client; returns the token response. */
export function tokenRequest(url: string, creds: ClientCreds, form: Record<string, string>): Promise<Record<string, unknown>> {
  return call(`${url}/oauth/token`, {
    method: 'POST',
    headers: { authorization: creds.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
}

/** The chat-bot interface's URL, from the start line's text (its JSON fields carry only auth_url and api_url). */
const botUrlOf = (msg: string | undefined) => (msg ? /chat-bot interface (http:\/\/[^\s,)]+)/.exec(msg)?.[1] : undefined);

/**
 * Starts `gatehouse serve` on loopback ports with a database of its own and
 * registers the bench's clients and users through the admin API. The
 * resource server verifies JWTs locally (GATEHOUSE_TOKEN_VERIFICATION=local);
 * codes live 10 minutes, so a pool prepared beforehand lasts the run; the Bot
 * API's flood control is off (rates 0), so sendMessage is measured, not its
 * limiter; webhooks may go to loopback (the bench's receiver).
 */
export async function startGatehouse(db: DbKind, opts: StartOptions = {}): Promise<GatehouseUnderTest> {
  const databaseUrl = opts.databaseUrl ?? (await freshDatabase(db));
  const adminToken = randomBytes(24).toString('base64url');
  // Settings come from here only, so a GATEHOUSE_* variable in the caller's shell cannot skew the run.
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_')));
  Object.assign(env, {
    GATEHOUSE_ADMIN_TOKEN: adminToken,
    GATEHOUSE_TOKEN_VERIFICATION: 'local',
    GATEHOUSE_CODE_TTL: '600',
    GATEHOUSE_BOT_FLOOD_CHAT_RATE: '0',
    GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: '0',
    GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true',
    ...(opts.workers ? { GATEHOUSE_WORKERS: opts.workers } : {}),
    ...opts.env,
  });
  const bin = opts.bin ?? GATEHOUSE_BIN;
  // The token is read at start, so the bot (and the user owning it) is made beforehand in the same database.
  if (opts.notifyBot) env.GATEHOUSE_NOTIFY_BOT_TOKEN = await notifyBotBeforeStart(bin, databaseUrl);
  const roles = opts.roles ?? 'auth,api,bot';
  const args = [...(opts.nodeFlags ?? []), bin, 'serve', '--roles', roles, '--host', '127.0.0.1', '--auth-port', '0', '--api-port', '0', '--bot-port', '0',
    '--database-url', databaseUrl, '--log-level', 'info'];
  const name = `gatehouse (${db}, ${roles}${opts.bin ? `, ${opts.bin}` : ''}${opts.workers ? `, workers ${opts.workers}` : ''})`;
  const { child, value: start } = await startChild(name, args, (line) => {
    // With several workers each logs its own line first; the primary's says the whole serve is ready.
    if (!jsonField(line, 'msg')?.startsWith('Gatehouse ready')) return undefined;
    const auth = jsonField(line, 'auth_url');
    return auth ? { auth, api: jsonField(line, 'api_url'), bot: botUrlOf(jsonField(line, 'msg')) } : undefined;
  }, { env, timeoutMs: 60_000 });
  const url = start.auth;

  const admin = (path: string, body: Record<string, unknown>) => call(`${url}/admin${path}`, {
    method: 'POST',
    expect: 201,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const client = async (clientName: string, body: Record<string, unknown>): Promise<ClientCreds> => {
    const c = await admin('/clients', { client_name: clientName, token_endpoint_auth_method: 'client_secret_basic', ...body });
    const id = c.client_id as string;
    const secret = c.client_secret as string;
    return { id, secret, basic: basicAuth(id, secret) };
  };
  const account = async (username: string): Promise<Account> => {
    const a = { username, password: randomBytes(18).toString('base64url') };
    await admin('/users', { username, email: `${username}@example.test`, password: a.password });
    return a;
  };

  try {
    const ccJwt = await client('bench cc jwt', { grant_types: ['client_credentials'], token_format: 'jwt' });
    const ccOpaque = await client('bench cc opaque', { grant_types: ['client_credentials'], token_format: 'opaque' });
    const introspector = await client('bench resource server', { grant_types: ['client_credentials'], introspect: true });
    const jwt = (await tokenRequest(url, ccJwt, { grant_type: 'client_credentials' })).access_token as string;
    const opaque = (await tokenRequest(url, ccOpaque, { grant_type: 'client_credentials' })).access_token as string;
    const none = { id: '', secret: '', basic: '' };
    if (opts.minimal) {
      return { db, databaseUrl, url, apiUrl: start.api, botUrl: start.bot, child, adminToken, bin, ccJwt, ccOpaque, introspector, jwt, opaque,
        refresher: none, webApp: { ...none, redirectUri: '' }, chatApp: none, user: { username: '', password: '' }, loginUsers: [], userJwt: '' };
    }
    const refresher = await client('bench refresher', { grant_types: ['password', 'refresh_token'], token_format: 'jwt' });
    const redirectUri = 'http://127.0.0.1:9/callback';
    const webApp = { ...(await client('bench web app', { grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [redirectUri], trusted: true, scope: 'user' })), redirectUri };
    const chatApp = await client('bench chat app', { grant_types: ['password'], scope: 'chat' });
    const user = await account('bench-user');
    const loginUsers = await Promise.all(Array.from({ length: 16 }, (_, i) => account(`bench-login-${i}`)));
    const userJwt = (await tokenRequest(url, refresher, { grant_type: 'password', username: user.username, password: user.password, scope: 'user' })).access_token as string;
    return { db, databaseUrl, url, apiUrl: start.api, botUrl: start.bot, child, adminToken, bin, ccJwt, ccOpaque, introspector, refresher, webApp, chatApp, user, loginUsers, jwt, opaque, userJwt };
  } catch (e) {
    throw new Error(`${name}: setting up failed: ${(e as Error).message}\n${child.tail.map((l) => `  | ${l}`).join('\n')}`);
  }
}

/**
 * `gatehouse serve --roles worker` on `gh`'s database (the webhook worker
 * alone, as a deployment runs it beside its HTTP nodes), with the same
 * settings as startGatehouse; resolves once it is ready.
 */
export async function startWorker(gh: GatehouseUnderTest, nodeFlags: string[] = []): Promise<Child> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_')));
  env.GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS = 'true';
  const args = [...nodeFlags, gh.bin, 'serve', '--roles', 'worker', '--database-url', gh.databaseUrl, '--log-level', 'info'];
  const { child } = await startChild(`gatehouse (${gh.db}, worker)`, args, (line) => (jsonField(line, 'msg')?.startsWith('Gatehouse ready') ? true : undefined), { env, timeoutMs: 60_000 });
  return child;
}

/**
 * Refresh tokens for the rotation scenario, minted through the password
 * grant. Each costs one argon2 verify, so a few run at once; successful logins
 * do not count against the per-username lockout (only failures do).
 */
export async function mintRefreshTokens(gh: GatehouseUnderTest, count: number, parallel = 4): Promise<string[]> {
  const out: string[] = [];
  const worker = async () => {
    while (out.length < count) {
      const r = await tokenRequest(gh.url, gh.refresher, { grant_type: 'password', username: gh.user.username, password: gh.user.password });
      out.push(r.refresh_token as string);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return out.slice(0, count);
}

/** A signed-in browser session of `account` (its cookie header), through the login form. */
export async function signIn(gh: GatehouseUnderTest, account: Account): Promise<string> {
  const page = await fetch(`${gh.url}/login`);
  const csrfCookie = /gh_csrf=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')?.[1];
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!csrfCookie || !csrf) throw new Error('login page: no CSRF cookie or token');
  const res = await fetch(`${gh.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `gh_csrf=${csrfCookie}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf_token: csrf, username: account.username, password: account.password, return_to: '/' }).toString(),
  });
  const session = /gh_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  if (res.status !== 303 || !session) throw new Error(`login: ${res.status}`);
  return `gh_session=${session}; gh_csrf=${csrfCookie}`;
}

/** The CSRF cookie and form token of a login page, for the login scenario. */
export async function loginForm(gh: GatehouseUnderTest): Promise<{ cookie: string; csrf: string }> {
  const page = await fetch(`${gh.url}/login`);
  const cookie = /gh_csrf=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')?.[1];
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!cookie || !csrf) throw new Error('login page: no CSRF cookie or token');
  return { cookie: `gh_csrf=${cookie}`, csrf };
}

/** One PKCE pair for every code of the pool: the exchange checks it the same way whatever its value. */
export const PKCE_VERIFIER = randomBytes(32).toString('base64url');
const PKCE_CHALLENGE = createHash('sha256').update(PKCE_VERIFIER).digest('base64url');

/**
 * Authorization codes for the exchange scenario: the authorization endpoint
 * driven by autocannon with a signed-in session and a trusted client (no
 * consent page), each 302 carrying a fresh code. Codes live 10 minutes here
 * (GATEHOUSE_CODE_TTL=600).
 */
export async function mintCodes(gh: GatehouseUnderTest, cookie: string, count: number): Promise<string[]> {
  const codes: string[] = [];
  const q = new URLSearchParams({
    response_type: 'code', client_id: gh.webApp.id, redirect_uri: gh.webApp.redirectUri, scope: 'user', state: 'bench',
    code_challenge: PKCE_CHALLENGE, code_challenge_method: 'S256',
  });
  await autocannon({
    url: gh.url,
    connections: 16,
    amount: count,
    requests: [{
      method: 'GET',
      path: `/login/oauth/authorize?${q}`,
      headers: { cookie },
      onResponse: (status, _body, _ctx, headers) => {
        const location = (headers as Record<string, string | string[] | undefined> | undefined)?.location;
        const code = status === 302 && typeof location === 'string' ? new URL(location).searchParams.get('code') : null;
        if (code) codes.push(code);
      },
    }],
  });
  if (codes.length < count * 0.9) throw new Error(`minting codes: got ${codes.length} of ${count}`);
  return codes;
}

const exec = promisify(execFile);

async function notifyBotBeforeStart(bin: string, databaseUrl: string): Promise<string> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_')));
  const db = ['--database-url', databaseUrl];
  const user = exec(process.execPath, [bin, 'user', 'create', '--username', 'bench-ops', '--email', 'ops@example.test', '--password-stdin', ...db], { env });
  user.child.stdin!.end(randomBytes(18).toString('base64url'));
  await user;
  const { stdout } = await exec(process.execPath, [bin, 'bot', 'create', '--owner', 'bench-ops', '--username', NOTIFY_BOT, '--name', 'Notifications', ...db, '--json'], { env });
  return (JSON.parse(stdout.trim().split('\n').pop()!) as { token: string }).token;
}

/** A bot created with `gatehouse bot create` against the same database; returns its token. */
export async function createBot(gh: GatehouseUnderTest, owner: string, username: string): Promise<string> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_')));
  const { stdout } = await exec(process.execPath, [gh.bin, 'bot', 'create', '--owner', owner, '--username', username, '--name', 'Bench bot',
    '--database-url', gh.databaseUrl, '--json'], { env });
  return (JSON.parse(stdout.trim().split('\n').pop()!) as { token: string }).token;
}

/** A person's bearer token with scope chat (password grant of the chat app). */
export async function chatToken(gh: GatehouseUnderTest, account: Account): Promise<string> {
  return (await tokenRequest(gh.url, gh.chatApp, { grant_type: 'password', username: account.username, password: account.password, scope: 'chat' })).access_token as string;
}

/** Admin API call (JSON). */
export function adminCall(gh: GatehouseUnderTest, method: string, path: string, body?: unknown, expect = 200): Promise<Record<string, unknown>> {
  return call(`${gh.url}/admin${path}`, {
    method,
    expect,
    headers: { authorization: `Bearer ${gh.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
}
