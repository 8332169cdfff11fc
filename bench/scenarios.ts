import { mintRefreshTokens, type GatehouseUnderTest } from './gatehouse.js';
import type { Load } from './load.js';

export interface Scenario {
  id: string;
  label: string;
  /** The server process answering, for its CPU figures. */
  pid: number | undefined;
  /** Runs before each measurement of the scenario; returns what to send. */
  prepare(): Promise<Load>;
}

const FORM = 'application/x-www-form-urlencoded';

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
    { id: 'fastify', label: 'bare Fastify route (GET, small JSON): the reference of both "vs Fastify" columns, with fastify-end', pid: fastify.pid, prepare: async () => ({ url: `${fastify.url}/` }) },
    {
      id: 'fastify-form',
      label: 'Fastify + @fastify/formbody, POST form in, token-sized JSON out with no-store headers: the endpoint\'s shape without its work',
      pid: fastifyForm.pid,
      prepare: async () => ({ url: `${fastifyForm.url}/oauth/token`, method: 'POST', headers: { 'content-type': FORM }, body: 'grant_type=client_credentials' }),
    },
  ];
}

/**
 * Refresh with rotation (RFC 9700 §4.14.2): each response carries the next
 * refresh token, which goes back into the pool for the next request. A token
 * in flight when a run stops is lost (its response is never read), so the
 * pool is topped up before every measurement.
 */
function refreshScenario(gh: GatehouseUnderTest, connections: number): Scenario {
  const pool: string[] = [];
  const headers = { authorization: gh.refresher.basic, 'content-type': FORM };
  return {
    id: 'refresh',
    label: 'refresh_token with rotation (JWT access token)',
    pid: gh.child.proc.pid,
    async prepare() {
      // Warm-up and measured run each strand at most `connections` tokens.
      const want = 2 * connections + 8;
      if (pool.length < want) pool.push(...(await mintRefreshTokens(gh, want - pool.length)));
      return {
        url: `${gh.url}/oauth/token`,
        method: 'POST',
        headers,
        requests: [{
          method: 'POST',
          path: '/oauth/token',
          headers,
          // An exhausted pool sends a bad token: the 400 shows up as non-2xx rather than stalling the run.
          setupRequest: (req) => ({ ...req, body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(pool.pop() ?? 'exhausted')}` }),
          onResponse: (status, body) => {
            if (status === 200) pool.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
          },
        }],
      };
    },
  };
}

/** The Gatehouse scenarios on one database. */
export function gatehouseScenarios(gh: GatehouseUnderTest, connections: number): Scenario[] {
  const post = (path: string, basic: string, body: string): Load => ({
    url: `${gh.url}${path}`,
    method: 'POST',
    headers: { authorization: basic, 'content-type': FORM },
    body,
  });
  const pid = gh.child.proc.pid;
  return [
    { id: 'cc', label: 'client_credentials, JWT client (client_secret_basic)', pid, prepare: async () => post('/oauth/token', gh.ccJwt.basic, 'grant_type=client_credentials') },
    { id: 'cc-opaque', label: 'client_credentials, opaque client (stored token)', pid, prepare: async () => post('/oauth/token', gh.ccOpaque.basic, 'grant_type=client_credentials') },
    { id: 'introspect', label: 'introspection of a JWT (POST /oauth/check_token)', pid, prepare: async () => post('/oauth/check_token', gh.introspector.basic, `token=${gh.jwt}`) },
    refreshScenario(gh, connections),
  ];
}

export const SCENARIO_IDS = ['http', 'fastify', 'fastify-form', 'cc', 'cc-opaque', 'introspect', 'refresh'] as const;
