import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { dropRedisPrefix, freshRedisPrefix, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { enrolTotp, formFor, passwordStep, stepNow, totpCode } from '../mfa/support.js';
import { REDIRECT, person, relyingParty, signIn, visit } from './support.js';

const PASSWORD_LEVEL = 'urn:gatehouse:acr:password';
const MFA_LEVEL = 'urn:gatehouse:acr:mfa';

/**
 * Issue 28 item 3: how the session authenticated (RFC 8176 `amr`), its level
 * (`acr`) and `auth_time` in ID tokens, JWT access tokens and introspection
 * (RFC 9470 §6), and `acr_values` treated as required, through PAR too; with
 * openid-client on both databases.
 */
const redis = await redisAvailable();
const variants = [
  ...(await databaseKinds()).map((k) => ({ ...k, label: k.kind as string, redis: false })),
  { kind: 'sqlite' as const, skip: redis ? false : 'Redis is not reachable', label: 'sqlite with sessions in Redis', redis: true },
];
for (const { kind, skip, label, redis: inRedis } of variants) {
  describe(`authentication levels with openid-client (${label})`, { skip }, () => {
    let server: TestServer;
    let ana: Awaited<ReturnType<typeof person>>;
    let ben: Awaited<ReturnType<typeof person>>;
    let config: oidc.Configuration;
    /** Ben's browser, signed in with password and authenticator app. */
    let benAgent: Agent;
    const prefix = inRedis ? freshRedisPrefix() : undefined;

    before(async () => {
      server = await startServer({ db: kind, ...(prefix ? { env: { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix } } : {}) });
      ana = await person(server, 'ana');
      ben = await person(server, 'ben');
      const enrolling = new Agent(server.url);
      assert.equal((await enrolling.login(ben.username, ben.password)).status, 303);
      const { secret } = await enrolTotp(enrolling);
      const step = await passwordStep(server.url, ben.username, ben.password);
      const done = await step.agent.post('/login/second-step', { ...formFor(step.page, '/login/second-step'), code: totpCode(secret, stepNow() + 1) });
      assert.equal(done.status, 303);
      benAgent = step.agent;
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid offline_access', trusted: true, introspect: true });
      config = await relyingParty(server, client.id, client.secret);
    });
    after(async () => {
      await server.close();
      if (prefix) await dropRedisPrefix(prefix);
    });

    it('discovery lists the levels, lowest first, and the claims', () => {
      const meta = config.serverMetadata();
      assert.deepEqual(meta.acr_values_supported, [PASSWORD_LEVEL, MFA_LEVEL, 'urn:gatehouse:acr:phishing-resistant']);
      for (const c of ['acr', 'amr', 'auth_time']) assert.ok(meta.claims_supported?.includes(c), c);
    });

    it('a password sign-in: acr password, amr pwd, auth_time in the ID token, the JWT access token and introspection', async () => {
      const before = Math.floor(Date.now() / 1000);
      const { tokens } = await signIn(config, new Agent(server.url), ana, 'openid');
      const id = tokens.claims()!;
      assert.equal(id.acr, PASSWORD_LEVEL);
      assert.deepEqual(id.amr, ['pwd']);
      assert.ok(id.auth_time! >= before - 1);
      const at = jose.decodeJwt(tokens.access_token);
      assert.equal(at.acr, PASSWORD_LEVEL);
      assert.equal(at.auth_time, id.auth_time);
      const intro = await oidc.tokenIntrospection(config, tokens.access_token);
      assert.equal(intro.acr, PASSWORD_LEVEL);
      assert.equal(intro.auth_time, id.auth_time);
      // OpenID Connect Core §12.2: a refresh repeats them.
      const refreshed = await oidc.refreshTokenGrant(config, (await signIn(config, new Agent(server.url), ana, 'openid offline_access', { prompt: 'consent' })).tokens.refresh_token!);
      assert.equal(refreshed.claims()?.acr, PASSWORD_LEVEL);
      assert.deepEqual(refreshed.claims()?.amr, ['pwd']);
    });

    it('password and authenticator app: acr mfa, amr pwd otp mfa, and acr_values mfa is met at once (code flow and PAR)', async () => {
      const { tokens, sawLogin } = await signIn(config, benAgent, ben, 'openid', { acr_values: MFA_LEVEL });
      assert.equal(sawLogin, false);
      assert.equal(tokens.claims()!.acr, MFA_LEVEL);
      assert.deepEqual(tokens.claims()!.amr, ['pwd', 'otp', 'mfa']);
      assert.equal(jose.decodeJwt(tokens.access_token).acr, MFA_LEVEL);
      assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).acr, MFA_LEVEL);

      const verifier = oidc.randomPKCECodeVerifier();
      const nonce = oidc.randomNonce();
      const url = await oidc.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: REDIRECT, scope: 'openid', nonce, acr_values: `${MFA_LEVEL} urn:example:unknown`,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const seen = await visit(benAgent, ben, url);
      const par = await oidc.authorizationCodeGrant(config, seen.callback, { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
      assert.equal(par.claims()!.acr, MFA_LEVEL);
    });

    it('acr_values above a password session: a sign-in is asked for, then unmet_authentication_requirements when it stays below', async () => {
      const agent = new Agent(server.url);
      assert.equal((await agent.login(ana.username, ana.password)).status, 303);
      for (const pushed of [false, true]) {
        const params = { redirect_uri: REDIRECT, scope: 'openid', state: 's', acr_values: MFA_LEVEL, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
        const url = pushed ? await oidc.buildAuthorizationUrlWithPAR(config, params) : oidc.buildAuthorizationUrl(config, params);
        const seen = await visit(agent, ana, url);
        assert.equal(seen.sawLogin, true, 'the person is asked to sign in again');
        assert.equal(seen.callback.searchParams.get('error'), 'unmet_authentication_requirements', String(seen.callback));
        assert.equal(seen.callback.searchParams.get('state'), 's');
      }
    });

    it('a password session whose person has a second factor is asked for that step only, then has acr mfa (the same sid)', async () => {
      const cleo = await person(server, 'cleo');
      const agent = new Agent(server.url);
      assert.equal((await agent.login(cleo.username, cleo.password)).status, 303);
      // Enrolled after signing in: the session stays at the password level.
      const { recoveryCodes } = await enrolTotp(agent);
      const first = await signIn(config, agent, cleo, 'openid');
      assert.equal(first.tokens.claims()!.acr, PASSWORD_LEVEL);
      const verifier = oidc.randomPKCECodeVerifier();
      const nonce = oidc.randomNonce();
      const url = await oidc.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: REDIRECT, scope: 'openid', nonce, acr_values: MFA_LEVEL,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const asked = await agent.get(`${url.pathname}${url.search}`);
      assert.equal(asked.status, 303);
      assert.equal(asked.headers.get('location'), '/login/second-step', 'not the password form');
      const page = await (await agent.get('/login/second-step')).text();
      const passed = await agent.post('/login/second-step', { ...formFor(page, '/login/second-step'), code: recoveryCodes[0]! });
      assert.equal(passed.status, 303);
      const back = await agent.get(passed.headers.get('location')!);
      assert.equal(back.status, 302);
      const tokens = await oidc.authorizationCodeGrant(config, new URL(back.headers.get('location')!), { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
      assert.equal(tokens.claims()!.acr, MFA_LEVEL);
      assert.deepEqual(tokens.claims()!.amr, ['pwd', 'otp', 'mfa']);
      assert.equal(tokens.claims()!.sid, first.tokens.claims()!.sid);
    });

    it('prompt=none or only unknown levels: unmet_authentication_requirements without a page', async () => {
      const base = { redirect_uri: REDIRECT, scope: 'openid', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
      const agent = new Agent(server.url);
      assert.equal((await agent.login(ana.username, ana.password)).status, 303);
      for (const extra of [{ acr_values: MFA_LEVEL, prompt: 'none' }, { acr_values: 'urn:example:gold' }] as Record<string, string>[]) {
        const res = await agent.get(String(oidc.buildAuthorizationUrl(config, { ...base, ...extra })).replace(server.url, ''));
        assert.equal(res.status, 302);
        const back = new URL(res.headers.get('location')!);
        assert.equal(back.origin + back.pathname, REDIRECT);
        assert.equal(back.searchParams.get('error'), 'unmet_authentication_requirements');
      }
      // A level the session meets answers as before.
      const ok = await signIn(config, agent, ana, 'openid', { acr_values: PASSWORD_LEVEL });
      assert.equal(ok.tokens.claims()!.acr, PASSWORD_LEVEL);
    });
  });
}
