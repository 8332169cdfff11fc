/**
 * People's-account rows (issues 26 and 28): sign-up with its proof of work,
 * "Forgot password?" by e-mail, and the authorization code flow releasing
 * roles. Gatehouse-only rows: node-oidc-provider has no sign-up or recovery,
 * and its code flow is not measured here, so they carry no peer.
 */
import { createHash, randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { adminCall, basicAuth, PKCE_VERIFIER, signIn, type ClientCreds, type GatehouseUnderTest } from './gatehouse.js';
import type { Load, LoadOptions } from './load.js';
import type { Scenario } from './scenarios.js';

const FORM = 'application/x-www-form-urlencoded';

/**
 * The settings of the process the sign-up and reset rows run against: sign-up
 * open; X-Forwarded-For trusted from loopback only, so each request can come
 * from an address of its own (5 sign-ups an hour and 20 resets per 15 minutes
 * per address would refuse the rest); e-mail to the log, so a request only
 * queues its message in the outbox (no worker role in that process: nothing
 * is sent).
 */
export const ACCOUNTS_ENV = { GATEHOUSE_SIGNUP: 'open', GATEHOUSE_TRUST_PROXY: '127.0.0.1', GATEHOUSE_SMTP_URL: 'log:' };

let addresses = 0;
/** A distinct client address per request (10.0.0.0/8), sent as X-Forwarded-For. */
const nextAddress = () => {
  const n = ++addresses;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

const unescapeHtml = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

interface Challenge { algorithm: string; challenge: string; maxnumber: number; salt: string; signature: string }

/**
 * ALTCHA v1's SHA-256 search (as altcha-lib's solveChallenge, synchronously
 * with node:crypto: altcha-lib's WebCrypto loop is several times slower and the
 * pool is solved before the measured seconds anyway).
 */
function solve(c: Challenge): string {
  for (let n = 0; n <= c.maxnumber; n++) {
    if (createHash('sha256').update(c.salt + n).digest('hex') === c.challenge) {
      return Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: n, salt: c.salt, signature: c.signature })).toString('base64');
    }
  }
  throw new Error('sign-up challenge: no solution');
}

interface SignupForm { cookie: string; body: string }

/** One sign-up ready to post: a fresh page's CSRF cookie and token, its challenge solved, a new username and address. */
async function signupForm(gh: GatehouseUnderTest, i: number): Promise<SignupForm> {
  const page = await fetch(`${gh.url}/signup`);
  const cookie = /gh_csrf=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')?.[1];
  const text = await page.text();
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(text)?.[1];
  const challenge = /data-challenge="([^"]+)"/.exec(text)?.[1];
  if (page.status !== 200 || !cookie || !csrf || !challenge) throw new Error(`sign-up page: ${page.status}, no CSRF cookie, token or challenge`);
  const username = `bs-${randomBytes(4).toString('hex')}-${i}`;
  const body = new URLSearchParams({
    csrf_token: csrf, username, email: `${username}@example.test`, password: randomBytes(18).toString('base64url'),
    altcha: solve(JSON.parse(unescapeHtml(challenge)) as Challenge),
  }).toString();
  return { cookie: `gh_csrf=${cookie}`, body };
}

/** Names for the reset row: each account's username and e-mail address, 5 times each (the per-name limit of 15 minutes). */
async function resetNames(gh: GatehouseUnderTest, accounts: number): Promise<string[]> {
  const names: string[] = [];
  const make = async (i: number) => {
    const username = `br-${randomBytes(4).toString('hex')}-${i}`;
    await adminCall(gh, 'POST', '/users', { username, email: `${username}@example.test`, password: randomBytes(18).toString('base64url') }, 201);
    for (let k = 0; k < 5; k++) names.push(username, `${username}@example.test`);
  };
  for (let i = 0; i < accounts; i += 4) await Promise.all(Array.from({ length: Math.min(4, accounts - i) }, (_, k) => make(i + k)));
  return names;
}

/** The CSRF cookie and token of the forgot-password form. */
async function forgotForm(gh: GatehouseUnderTest): Promise<{ cookie: string; csrf: string }> {
  const page = await fetch(`${gh.url}/login/forgot`);
  const cookie = /gh_csrf=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')?.[1];
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!cookie || !csrf) throw new Error('forgot page: no CSRF cookie or token');
  return { cookie: `gh_csrf=${cookie}`, csrf };
}

/** A request for each of the run's seconds at `rate`, plus a connection's worth each for the warm-up's and the run's stragglers. */
const wanted = (rate: number, load: LoadOptions, connections: number) => Math.ceil(rate * (load.warmup + load.duration) * 1.3) + 2 * connections + 8;

/** Sign-up and reset, on a Gatehouse started with ACCOUNTS_ENV (its own process: bench/run.ts). */
export function accountScenarios(gh: GatehouseUnderTest, load: LoadOptions): Scenario[] {
  const pid = gh.child.proc.pid;
  const forms: SignupForm[] = [];
  const known: string[] = [];
  // First guesses above what this machine does (argon2 bounds sign-up; the 600 ms floor bounds reset at connections / 0.6 s).
  let signupRate = 60;
  let signupAfterTopUp: number | undefined;
  const SIGNUP_CONNECTIONS = 16;
  const resetRate = load.connections / 0.6;
  let made = 0;
  const reset = async (names: () => string): Promise<Load> => {
    const { cookie, csrf } = await forgotForm(gh);
    const headers = { cookie, 'content-type': FORM };
    return {
      url: `${gh.url}/login/forgot`, method: 'POST', headers,
      requests: [{
        method: 'POST', path: '/login/forgot', headers,
        setupRequest: (req) => ({
          ...req, headers: { ...headers, 'x-forwarded-for': nextAddress() },
          body: new URLSearchParams({ csrf_token: csrf, username: names(), via: 'email' }).toString(),
        }),
      }],
    };
  };
  return [
    {
      id: 'signup',
      label: 'sign-up: POST /signup (GATEHOUSE_SIGNUP=open) with a new username and address, a fresh CSRF cookie and ALTCHA solution each (solved before the run), an address of its own (X-Forwarded-For); argon2id hash, account, verification e-mail queued, session; 16 connections',
      pid,
      async prepare() {
        if (signupAfterTopUp !== undefined) signupRate = Math.max(10, (signupAfterTopUp - forms.length) / (load.warmup + load.duration));
        const want = wanted(signupRate, load, SIGNUP_CONNECTIONS);
        for (let i = forms.length; i < want; i += 8) forms.push(...(await Promise.all(Array.from({ length: Math.min(8, want - i) }, (_, k) => signupForm(gh, made++ + k)))));
        signupAfterTopUp = forms.length;
        const headers = { 'content-type': FORM };
        return {
          url: `${gh.url}/signup`, method: 'POST', headers, connections: SIGNUP_CONNECTIONS, okStatus: 303,
          requests: [{
            method: 'POST', path: '/signup', headers,
            // An empty pool sends a form without its cookie: the 403 shows as non-2xx rather than stalling the run.
            setupRequest: (req) => {
              const f = forms.pop();
              return { ...req, headers: { ...headers, 'x-forwarded-for': nextAddress(), ...(f ? { cookie: f.cookie } : {}) }, body: f?.body ?? 'exhausted=1' };
            },
          }],
        };
      },
    },
    {
      id: 'reset',
      label: '"Forgot password?" by e-mail: POST /login/forgot for an existing account (its username or address, 5 times each), each from an address of its own; reset row written and the e-mail queued (GATEHOUSE_SMTP_URL=log:, no worker: nothing sent); every answer waits out 600 ms, so req/s ≈ connections / 0.6 s: read CPU µs/req',
      pid,
      async prepare() {
        const need = wanted(resetRate, load, load.connections);
        if (known.length < need) known.push(...(await resetNames(gh, Math.ceil((need - known.length) / 10))));
        // An empty pool repeats a name: its sixth request is refused (429), counted as non-2xx.
        return reset(() => known.pop() ?? 'bench-exhausted');
      },
    },
    {
      id: 'reset-unknown',
      label: 'the same for a name no account has: a reset row written, no e-mail; the same 600 ms floor',
      pid,
      prepare: () => reset(() => `nobody-${randomBytes(6).toString('hex')}`),
    },
  ];
}

/**
 * Authorization codes with scope `openid roles` for `client` (as mintCodes in
 * bench/gatehouse.ts), driven through the authorization endpoint by autocannon.
 */
async function mintRoleCodes(gh: GatehouseUnderTest, client: ClientCreds & { redirectUri: string }, cookie: string, count: number): Promise<string[]> {
  const codes: string[] = [];
  const q = new URLSearchParams({
    response_type: 'code', client_id: client.id, redirect_uri: client.redirectUri, scope: 'openid roles', state: 'bench', nonce: 'bench',
    code_challenge: createHash('sha256').update(PKCE_VERIFIER).digest('base64url'), code_challenge_method: 'S256',
  });
  await autocannon({
    url: gh.url, connections: 16, amount: count,
    requests: [{
      method: 'GET', path: `/login/oauth/authorize?${q}`, headers: { cookie },
      onResponse: (status, _body, _ctx, headers) => {
        const location = (headers as Record<string, string | string[] | undefined> | undefined)?.location;
        const code = status === 302 && typeof location === 'string' ? new URL(location).searchParams.get('code') : null;
        if (code) codes.push(code);
      },
    }],
  });
  if (codes.length < count * 0.9) throw new Error(`minting codes (openid roles): got ${codes.length} of ${count}`);
  return codes;
}

/** A trusted client allowed `openid roles`, and a role granted to the bench's user (the admin API, as `gatehouse role create/grant`). */
async function rolesClient(gh: GatehouseUnderTest): Promise<ClientCreds & { redirectUri: string }> {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const c = await adminCall(gh, 'POST', '/clients', {
    client_name: 'bench roles app', token_endpoint_auth_method: 'client_secret_basic', grant_types: ['authorization_code', 'refresh_token'],
    redirect_uris: [redirectUri], trusted: true, scope: 'openid roles',
  }, 201);
  for (const role of ['bench-deploy', 'bench-read']) {
    await adminCall(gh, 'POST', '/roles', { name: role }, 201);
    await adminCall(gh, 'POST', `/roles/${role}/grants`, { username: gh.user.username });
  }
  const id = c.client_id as string;
  const secret = c.client_secret as string;
  return { id, secret, basic: basicAuth(id, secret), redirectUri };
}

/** The `code` row with scope `openid roles`: the exchange also signs an ID token carrying the person's roles. */
export function codeRolesScenario(gh: GatehouseUnderTest, load: LoadOptions): Scenario {
  const codes: string[] = [];
  let client: (ClientCreds & { redirectUri: string }) | undefined;
  let session: string | undefined;
  let rate = 8000;
  let afterTopUp: number | undefined;
  return {
    id: 'code-roles',
    label: 'authorization-code exchange with scope `openid roles` (issue 28): code + PKCE → JWT access token, refresh token and an ID token with the person\'s 2 roles; codes minted beforehand',
    pid: gh.child.proc.pid,
    async prepare() {
      client ??= await rolesClient(gh);
      session ??= await signIn(gh, gh.user);
      if (afterTopUp !== undefined) rate = Math.max(1000, (afterTopUp - codes.length) / (load.warmup + load.duration));
      const want = wanted(rate, load, load.connections);
      if (codes.length < want) codes.push(...(await mintRoleCodes(gh, client, session, want - codes.length)));
      afterTopUp = codes.length;
      const headers = { authorization: client.basic, 'content-type': FORM };
      const redirect = encodeURIComponent(client.redirectUri);
      return {
        url: `${gh.url}/oauth/token`, method: 'POST', headers,
        requests: [{
          method: 'POST', path: '/oauth/token', headers,
          setupRequest: (req) => ({ ...req, body: `grant_type=authorization_code&code=${encodeURIComponent(codes.pop() ?? 'exhausted')}&redirect_uri=${redirect}&code_verifier=${PKCE_VERIFIER}` }),
        }],
      };
    },
  };
}
