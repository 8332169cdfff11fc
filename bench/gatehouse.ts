import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/** A Gatehouse child process and the fixtures the scenarios use. */
export interface GatehouseUnderTest {
  db: DbKind;
  url: string;
  child: Child;
  ccJwt: ClientCreds;
  ccOpaque: ClientCreds;
  introspector: ClientCreds;
  refresher: ClientCreds;
  user: { username: string; password: string };
  /** A client_credentials JWT to introspect. */
  jwt: string;
}

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
async function freshDatabase(db: DbKind): Promise<string> {
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

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function call(url: string, init: RequestInit & { expect?: number }): Promise<Record<string, unknown>> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (res.status !== (init.expect ?? 200)) throw new Error(`${init.method ?? 'GET'} ${new URL(url).pathname}: ${res.status} ${text}`);
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

/**
 * Starts `gatehouse serve` (authorization server role only) on a loopback
 * port with a database of its own, and registers the bench's clients and
 * user through the admin API. `nodeFlags` go to the child's node (`--cpu-prof`,
 * which NODE_OPTIONS does not accept); `bin` may name another checkout's
 * bin/gatehouse.mjs, to compare two versions in one run.
 */
export async function startGatehouse(db: DbKind, opts: { nodeFlags?: string[]; bin?: string } = {}): Promise<GatehouseUnderTest> {
  const databaseUrl = await freshDatabase(db);
  const adminToken = randomBytes(24).toString('base64url');
  // Settings come from flags only, so a GATEHOUSE_* variable in the caller's shell cannot skew the run.
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_')));
  env.GATEHOUSE_ADMIN_TOKEN = adminToken;
  const args = [...(opts.nodeFlags ?? []), opts.bin ?? GATEHOUSE_BIN, 'serve', '--roles', 'auth', '--host', '127.0.0.1', '--auth-port', '0', '--database-url', databaseUrl, '--log-level', 'info'];
  const name = `gatehouse (${db}${opts.bin ? `, ${opts.bin}` : ''})`;
  const { child, value: url } = await startChild(name, args, (line) => jsonField(line, 'auth_url'), { env });

  const admin = (path: string, body: Record<string, unknown>) => call(`${url}/admin${path}`, {
    method: 'POST',
    expect: 201,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const client = async (name: string, body: Record<string, unknown>): Promise<ClientCreds> => {
    const c = await admin('/clients', { client_name: name, token_endpoint_auth_method: 'client_secret_basic', ...body });
    const id = c.client_id as string;
    const secret = c.client_secret as string;
    return { id, secret, basic: basic(id, secret) };
  };

  try {
    const ccJwt = await client('bench cc jwt', { grant_types: ['client_credentials'], token_format: 'jwt' });
    const ccOpaque = await client('bench cc opaque', { grant_types: ['client_credentials'], token_format: 'opaque' });
    const introspector = await client('bench resource server', { grant_types: ['client_credentials'], introspect: true });
    const refresher = await client('bench refresher', { grant_types: ['password', 'refresh_token'], token_format: 'jwt' });
    const user = { username: 'bench-user', password: randomBytes(18).toString('base64url') };
    await admin('/users', { username: user.username, email: 'bench-user@example.test', password: user.password });
    const jwt = (await tokenRequest(url, ccJwt, { grant_type: 'client_credentials' })).access_token as string;
    return { db, url, child, ccJwt, ccOpaque, introspector, refresher, user, jwt };
  } catch (e) {
    throw new Error(`${name}: setting up failed: ${(e as Error).message}\n${child.tail.map((l) => `  | ${l}`).join('\n')}`);
  }
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
