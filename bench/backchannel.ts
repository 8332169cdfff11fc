import type autocannon from 'autocannon';
import { adminCall, basicAuth, call, type GatehouseUnderTest } from './gatehouse.js';
import type { Load, LoadOptions } from './load.js';
import type { Scenario } from './scenarios.js';

const FORM = 'application/x-www-form-urlencoded';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const CIBA_GRANT = 'urn:openid:params:grant-type:ciba';

/** `count` results of `make`, `parallel` at a time. */
async function mint(count: number, make: () => Promise<string>, parallel = 48): Promise<string[]> {
  const out: string[] = [];
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (out.length < count) out.push(await make());
  }));
  return out.slice(0, count);
}

/**
 * One poll per pending request, each request polled once (so every answer is
 * authorization_pending, never slow_down): the token endpoint's cost of a
 * client waiting for its person, per request. A pool minted beforehand is
 * sized from the previous run's pace.
 */
function pollScenario(gh: GatehouseUnderTest, load: LoadOptions, pid: number | undefined, kind: 'device' | 'ciba'): Scenario {
  const pool: string[] = [];
  let rate = 1500;
  let afterTopUp: number | undefined;
  let client: { basic: string } | undefined;
  const grant = kind === 'device' ? DEVICE_GRANT : CIBA_GRANT;
  const field = kind === 'device' ? 'device_code' : 'auth_req_id';
  return {
    id: `${kind}-poll`,
    label: kind === 'device'
      ? 'device_code grant poll answering authorization_pending (RFC 8628: client auth, lookup by hash, the interval\'s conditional UPDATE)'
      : 'CIBA poll answering authorization_pending (OpenID Connect CIBA: client auth, lookup by hash, the interval\'s conditional UPDATE)',
    pid,
    ceiling: 'cc',
    async prepare(): Promise<Load> {
      if (!client) {
        const c = await adminCall(gh, 'POST', '/clients', {
          client_name: `bench ${kind}`, token_endpoint_auth_method: 'client_secret_basic', grant_types: [grant], scope: 'openid user',
          ...(kind === 'ciba' ? { backchannel_token_delivery_mode: 'poll' } : {}),
        }, 201);
        client = { basic: basicAuth(c.client_id as string, c.client_secret as string) };
      }
      const headers = { authorization: client.basic, 'content-type': FORM };
      if (afterTopUp !== undefined) rate = Math.max(500, (afterTopUp - pool.length) / (load.warmup + load.duration));
      const want = Math.ceil(rate * (load.warmup + load.duration) * 1.3) + 2 * load.connections + 8;
      if (pool.length < want) {
        pool.push(...(await mint(want - pool.length, async () => {
          const r = kind === 'device'
            ? await call(`${gh.url}/oauth/device_authorization`, { method: 'POST', headers, body: 'scope=user' })
            : await call(`${gh.url}/oauth/bc-authorize`, { method: 'POST', headers, body: `scope=openid&login_hint=${encodeURIComponent(gh.user.username)}` });
          return r[field] as string;
        })));
      }
      afterTopUp = pool.length;
      const path = '/oauth/token';
      const request: autocannon.Request = {
        method: 'POST', path, headers,
        setupRequest: (req) => ({ ...req, body: `grant_type=${encodeURIComponent(grant)}&${field}=${encodeURIComponent(pool.pop() ?? 'exhausted')}` }),
      };
      return { url: `${gh.url}${path}`, method: 'POST', headers, okStatus: 400, requests: [request] };
    },
  };
}

/** Device authorization and CIBA polling rows (docs/second-factors.md, Device authorization; docs/benchmarks.md). */
export function backchannelScenarios(gh: GatehouseUnderTest, load: LoadOptions, pid: number | undefined): Scenario[] {
  return [pollScenario(gh, load, pid, 'device'), pollScenario(gh, load, pid, 'ciba')];
}
