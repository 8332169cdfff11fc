import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, withListeners } from '../../src/config.js';
import { configFromArgs } from '../../src/cli/main.js';
import { SETTING_NAMES, flagOf, settingsTable, type SettingName } from '../../src/settings.js';
import { SETTINGS_DOC, SETTINGS_END, SETTINGS_START } from '../../scripts/docs-settings.js';
import { runCli } from '../helpers/cli.js';

const KEY = 'A'.repeat(43) + '=';
const DIR = mkdtempSync(join(tmpdir(), 'gh-settings-'));
const PROVIDERS_FILE = join(DIR, 'providers.json');
writeFileSync(PROVIDERS_FILE, JSON.stringify([{ id: 'gh', type: 'github', client_id: 'a', client_secret: 'b' }]));
const KEY_FILE = join(DIR, 'secret-key');
writeFileSync(KEY_FILE, `${KEY}\n`, { mode: 0o600 });

/** A valid value other than the default for every setting, and a config field it shows in. */
const SAMPLES: Record<SettingName, [string, (c: ReturnType<typeof loadConfig>) => unknown, unknown]> = {
  GATEHOUSE_DATABASE_URL: ['sqlite::memory:', (c) => c.databaseUrl, 'sqlite::memory:'],
  GATEHOUSE_REDIS_URL: ['redis://127.0.0.1:6379', (c) => c.redisUrl, 'redis://127.0.0.1:6379'],
  GATEHOUSE_REDIS_PREFIX: ['t1:', (c) => c.redisPrefix, 't1:'],
  GATEHOUSE_HOST: ['::1', (c) => c.host, '::1'],
  GATEHOUSE_AUTH_PORT: ['0', (c) => c.authPort, 0],
  GATEHOUSE_API_PORT: ['0', (c) => c.apiPort, 0],
  GATEHOUSE_BOT_PORT: ['0', (c) => c.botPort, 0],
  GATEHOUSE_ROLES: ['auth, api', (c) => [...c.roles], ['auth', 'api']],
  GATEHOUSE_WORKERS: ['3', (c) => c.workers, 3],
  GATEHOUSE_AUTH_URL: ['https://id.example.test/', (c) => c.authUrl, 'https://id.example.test'],
  GATEHOUSE_API_URL: ['https://api.example.test', (c) => c.apiUrl, 'https://api.example.test'],
  GATEHOUSE_BOT_API_URL: ['https://bots.example.test', (c) => c.botApiUrl, 'https://bots.example.test'],
  GATEHOUSE_ADMIN_TOKEN: ['s3cret', (c) => c.adminToken, 's3cret'],
  GATEHOUSE_SECRET_KEY: [KEY, (c) => c.secretKey, KEY],
  GATEHOUSE_SECRET_KEY_FILE: [KEY_FILE, (c) => c.secretKey, KEY],
  GATEHOUSE_MIGRATE: ['off', (c) => c.migrate, 'off'],
  GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: ['yes', (c) => c.allowPrivateWebhooks, true],
  GATEHOUSE_ACCESS_TOKEN_TTL: ['120', (c) => c.accessTokenTtl, 120],
  GATEHOUSE_CODE_TTL: ['600', (c) => c.codeTtl, 600],
  GATEHOUSE_REFRESH_TOKEN_TTL: ['7200', (c) => c.refreshTokenTtl, 7200],
  GATEHOUSE_SESSION_TTL: ['60', (c) => c.sessionTtl, 60],
  GATEHOUSE_REAUTH_WINDOW: ['120', (c) => c.reauthWindow, 120],
  GATEHOUSE_TOKEN_ENDPOINT_GET: ['true', (c) => c.tokenEndpointGet, true],
  GATEHOUSE_OPEN_TOKEN_KEY: ['on', (c) => c.openTokenKey, true],
  GATEHOUSE_PAR_TTL: ['600', (c) => c.parTtl, 600],
  GATEHOUSE_POLL_INTERVAL: ['2', (c) => c.pollInterval, 2],
  GATEHOUSE_PAR_REQUIRED: ['true', (c) => c.parRequired, true],
  GATEHOUSE_REGISTRATION: ['open', (c) => c.registration, 'open'],
  GATEHOUSE_SIGNUP: ['invite', (c) => c.signup, 'invite'],
  GATEHOUSE_TRUST_PROXY: ['10.0.0.1', (c) => c.trustProxy, '10.0.0.1'],
  GATEHOUSE_LOG_LEVEL: ['silent', (c) => c.logLevel, 'silent'],
  GATEHOUSE_LOG_FORMAT: ['text', (c) => c.logFormat, 'text'],
  GATEHOUSE_METRICS_PORT: ['9464', (c) => c.metricsPort, 9464],
  GATEHOUSE_TOKEN_VERIFICATION: ['local', (c) => c.tokenVerification, 'local'],
  GATEHOUSE_INTROSPECTION_CACHE_TTL: ['0', (c) => c.introspectionCacheTtl, 0],
  GATEHOUSE_INTROSPECTION_CLIENT_ID: ['rs', (c) => c.introspectionClientId, 'rs'],
  GATEHOUSE_INTROSPECTION_CLIENT_SECRET: ['rs-secret', (c) => c.introspectionClientSecret, 'rs-secret'],
  GATEHOUSE_BOT_FLOOD_CHAT_RATE: ['0.5', (c) => c.botFlood.perChat.rate, 0.5],
  GATEHOUSE_BOT_FLOOD_CHAT_BURST: ['3', (c) => c.botFlood.perChat.burst, 3],
  GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: ['0', (c) => c.botFlood.global.rate, 0],
  GATEHOUSE_BOT_FLOOD_GLOBAL_BURST: ['7', (c) => c.botFlood.global.burst, 7],
  GATEHOUSE_TLS_CERT: ['/tmp/cert.pem', (c) => c.tlsCert, '/tmp/cert.pem'],
  GATEHOUSE_TLS_KEY: ['/tmp/key.pem', (c) => c.tlsKey, '/tmp/key.pem'],
  GATEHOUSE_CLIENT_CERT_HEADER: ['Client-Cert', (c) => c.clientCertHeader, 'client-cert'],
  GATEHOUSE_PROVIDERS_FILE: [PROVIDERS_FILE, (c) => c.federationProviders.map((p) => p.id), ['gh']],
  GATEHOUSE_PROVIDERS: ['[{"id":"corp","type":"github","client_id":"c","client_secret":"d"}]', (c) => c.federationProviders.map((p) => p.id), ['corp']],
  GATEHOUSE_NOTIFY_BOT_TOKEN: ['1:abc', (c) => c.notifyBotToken, '1:abc'],
  GATEHOUSE_NOTIFY_BOT_API_URL: ['https://api.telegram.org/', (c) => c.notifyBotApiUrl, 'https://api.telegram.org'],
  GATEHOUSE_WEBHOOK_TIMEOUT: ['300', (c) => c.webhookTimeout, 300],
  GATEHOUSE_SMTP_URL: ['smtps://mailer:p%40ss@smtp.example.test', (c) => c.smtp,
    { kind: 'smtp', secure: true, host: 'smtp.example.test', port: 465, user: 'mailer', pass: 'p@ss' }],
  GATEHOUSE_MAIL_FROM: ['Example <id@example.test>', (c) => c.mailFrom, 'Example <id@example.test>'],
  GATEHOUSE_FILES_DIR: ['/srv/gatehouse/files', (c) => c.filesDir, '/srv/gatehouse/files'],
  GATEHOUSE_BOT_FILE_QUOTA: ['500MB', (c) => c.botFileQuota, 500_000_000],
};

/** Settings some samples need beside them (a pair, or a prerequisite). */
const COMPANIONS: Partial<Record<SettingName, Record<string, string>>> = {
  GATEHOUSE_TLS_CERT: { GATEHOUSE_TLS_KEY: '/tmp/key.pem' },
  GATEHOUSE_TLS_KEY: { GATEHOUSE_TLS_CERT: '/tmp/cert.pem' },
  GATEHOUSE_CLIENT_CERT_HEADER: { GATEHOUSE_TRUST_PROXY: 'true' },
};

describe('settings: one table for loadConfig, the flags, --help and docs/deployment.md', () => {
  after(() => rmSync(DIR, { recursive: true, force: true }));

  it('the settings section of docs/deployment.md is the table, exactly (npm run docs:settings writes it)', () => {
    const doc = readFileSync(join(import.meta.dirname, '../..', SETTINGS_DOC), 'utf8');
    const start = doc.indexOf(SETTINGS_START);
    const end = doc.indexOf(SETTINGS_END);
    assert.ok(start >= 0 && end > start, `${SETTINGS_DOC} has the settings markers`);
    assert.equal(doc.slice(start + SETTINGS_START.length, end).trim(), settingsTable());
  });

  it('every setting has a flag (--auth-port for GATEHOUSE_AUTH_PORT) that sets it, over the environment', () => {
    assert.deepEqual(Object.keys(SAMPLES).sort(), [...SETTING_NAMES].sort(), 'a sample value for every setting');
    for (const name of SETTING_NAMES) {
      const [value, read, expected] = SAMPLES[name];
      const companions = Object.entries(COMPANIONS[name] ?? {}).flatMap(([n, v]) => [`--${flagOf(n as SettingName)}`, v]);
      const config = configFromArgs([`--${flagOf(name)}`, value, ...companions]);
      assert.deepEqual(read(config), expected, `--${flagOf(name)} ${value}`);
      assert.deepEqual(read(loadConfig({ [name]: value, ...COMPANIONS[name] })), expected, `${name}=${value}`);
    }
    // A flag wins over the variable; an empty flag falls back to the default.
    const saved = process.env.GATEHOUSE_CODE_TTL;
    process.env.GATEHOUSE_CODE_TTL = '30';
    try {
      assert.equal(configFromArgs(['--code-ttl', '90']).codeTtl, 90);
      assert.equal(configFromArgs([]).codeTtl, 30);
      assert.equal(configFromArgs(['--code-ttl', '']).codeTtl, 60);
    } finally {
      if (saved === undefined) delete process.env.GATEHOUSE_CODE_TTL;
      else process.env.GATEHOUSE_CODE_TTL = saved;
    }
  });

  it('a bad value stops with a message that names the setting and the value', () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ GATEHOUSE_AUTH_PORT: '65536' }, /^GATEHOUSE_AUTH_PORT must be an integer from 0 to 65535, got "65536"$/],
      [{ GATEHOUSE_CODE_TTL: 'abc' }, /^GATEHOUSE_CODE_TTL must be an integer from 1 to 600, got "abc"$/],
      [{ GATEHOUSE_SESSION_TTL: '59' }, /^GATEHOUSE_SESSION_TTL must be an integer from 60/],
      [{ GATEHOUSE_REAUTH_WINDOW: '29' }, /^GATEHOUSE_REAUTH_WINDOW must be an integer from 30 to 86400, got "29"$/],
      [{ GATEHOUSE_REAUTH_WINDOW: 'ten minutes' }, /^GATEHOUSE_REAUTH_WINDOW must be an integer from 30 to 86400, got "ten minutes"$/],
      [{ GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'maybe' }, /^GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS must be true or false, got "maybe"$/],
      [{ GATEHOUSE_AUTH_URL: 'ftp://x.test' }, /^GATEHOUSE_AUTH_URL must be an http\(s\) URL, got "ftp:\/\/x.test"$/],
      [{ GATEHOUSE_NOTIFY_BOT_API_URL: 'not a url' }, /^GATEHOUSE_NOTIFY_BOT_API_URL must be an http\(s\) URL/],
      [{ GATEHOUSE_ROLES: 'auth,chef' }, /^GATEHOUSE_ROLES: unknown role "chef" \(use auth,api,bot,worker\)$/],
      [{ GATEHOUSE_DATABASE_URL: 'mysql://x' }, /^GATEHOUSE_DATABASE_URL must be sqlite:PATH, sqlite::memory: or postgres:\/\/…$/],
      [{ GATEHOUSE_TOKEN_VERIFICATION: 'guess' }, /^GATEHOUSE_TOKEN_VERIFICATION must be one of table, local, introspection, got "guess"$/],
      [{ GATEHOUSE_LOG_LEVEL: 'loud' }, /^GATEHOUSE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"$/],
      [{ GATEHOUSE_BOT_FLOOD_CHAT_RATE: '-1' }, /^GATEHOUSE_BOT_FLOOD_CHAT_RATE must be a number from 0 to 1000000, got "-1"$/],
      [{ GATEHOUSE_BOT_FLOOD_GLOBAL_BURST: '0' }, /^GATEHOUSE_BOT_FLOOD_GLOBAL_BURST must be an integer from 1 to 1000000, got "0"$/],
      [{ GATEHOUSE_BOT_FILE_QUOTA: 'lots' }, /^GATEHOUSE_BOT_FILE_QUOTA must be a size such as 500MB or 1GiB, got "lots"$/],
      [{ GATEHOUSE_BOT_FILE_QUOTA: '0' }, /^GATEHOUSE_BOT_FILE_QUOTA must be a size such as 500MB or 1GiB, got "0"$/],
      [{ GATEHOUSE_BOT_FILE_QUOTA: '2XB' }, /^GATEHOUSE_BOT_FILE_QUOTA must be a size such as 500MB or 1GiB, got "2XB"$/],
      [{ GATEHOUSE_WEBHOOK_TIMEOUT: '301' }, /^GATEHOUSE_WEBHOOK_TIMEOUT must be an integer from 1 to 300, got "301"$/],
      [{ GATEHOUSE_WORKERS: '0' }, /^GATEHOUSE_WORKERS must be auto or an integer from 1 to 256, got "0"$/],
      [{ GATEHOUSE_WORKERS: 'all' }, /^GATEHOUSE_WORKERS must be auto or an integer from 1 to 256, got "all"$/],
      [{ GATEHOUSE_POLL_INTERVAL: '0' }, /^GATEHOUSE_POLL_INTERVAL must be an integer from 1 to 60, got "0"$/],
      [{ GATEHOUSE_INTROSPECTION_CACHE_TTL: '1.5' }, /^GATEHOUSE_INTROSPECTION_CACHE_TTL must be an integer from 0 to 3600, got "1.5"$/],
      [{ GATEHOUSE_LOG_FORMAT: 'pretty' }, /^GATEHOUSE_LOG_FORMAT must be one of json, text, got "pretty"$/],
      [{ GATEHOUSE_REGISTRATION: 'public' }, /^GATEHOUSE_REGISTRATION must be one of off, token, open, got "public"$/],
      [{ GATEHOUSE_SIGNUP: 'yes' }, /^GATEHOUSE_SIGNUP must be one of off, invite, open, got "yes"$/],
      [{ GATEHOUSE_METRICS_PORT: '70000' }, /^GATEHOUSE_METRICS_PORT must be an integer from 0 to 65535, got "70000"$/],
      [{ GATEHOUSE_METRICS_PORT: 'x' }, /^GATEHOUSE_METRICS_PORT must be an integer from 0 to 65535, got "x"$/],
      [{ GATEHOUSE_SECRET_KEY: 'short' }, /^GATEHOUSE_SECRET_KEY must be 32 random bytes in base64/],
      [{ GATEHOUSE_CLIENT_CERT_HEADER: 'bad header', GATEHOUSE_TRUST_PROXY: 'true' }, /^GATEHOUSE_CLIENT_CERT_HEADER must be a header name, got "bad header"$/],
      [{ GATEHOUSE_CLIENT_CERT_HEADER: 'client-cert' }, /needs GATEHOUSE_TRUST_PROXY/],
      [{ GATEHOUSE_TLS_CERT: '/tmp/cert.pem' }, /GATEHOUSE_TLS_CERT and GATEHOUSE_TLS_KEY go together/],
      [{ GATEHOUSE_TOKEN_VERIFICATION: 'introspection' }, /needs GATEHOUSE_INTROSPECTION_CLIENT_ID and GATEHOUSE_INTROSPECTION_CLIENT_SECRET/],
      [{ GATEHOUSE_PROVIDERS: '{nope' }, /GATEHOUSE_PROVIDERS is not JSON/],
      [{ GATEHOUSE_MAIL_FROM: 'Gatehouse <nobody>' }, /^GATEHOUSE_MAIL_FROM must be an address or Name <address>, got "Gatehouse <nobody>"$/],
      [{ GATEHOUSE_MAIL_FROM: 'a@b.test\r\nBcc: c@d.test' }, /^GATEHOUSE_MAIL_FROM must be an address or Name <address>/],
    ];
    for (const [env, message] of bad) {
      assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && message.test((e as Error).message), JSON.stringify(env));
    }
  });

  it('GATEHOUSE_SMTP_URL: smtp, smtps or log:; a refusal never repeats the value (it may hold the password)', () => {
    assert.deepEqual(loadConfig({ GATEHOUSE_SMTP_URL: 'log:' }).smtp, { kind: 'log' });
    assert.deepEqual(loadConfig({ GATEHOUSE_SMTP_URL: 'smtp://127.0.0.1:2525' }).smtp,
      { kind: 'smtp', secure: false, host: '127.0.0.1', port: 2525, user: undefined, pass: undefined });
    assert.deepEqual(loadConfig({ GATEHOUSE_SMTP_URL: 'smtp://mx.example.test' }).smtp,
      { kind: 'smtp', secure: false, host: 'mx.example.test', port: 587, user: undefined, pass: undefined }, 'port 587 by default, 465 for smtps');
    assert.equal(loadConfig({}).smtp, undefined);
    for (const raw of ['http://u:hunter2@mx.example.test:25', 'smtp://u:hunter2@mx.example.test:25/path', 'smtp://u:hunter2@mx.example.test:25?x=1', 'log', 'log:file', 'smtp://u:hunter2@', 'mx.example.test:25']) {
      assert.throws(() => loadConfig({ GATEHOUSE_SMTP_URL: raw }), (e: unknown) => e instanceof ConfigError
        && e.message === 'GATEHOUSE_SMTP_URL must be smtp://[user:pass@]host:port, smtps://[user:pass@]host:port or log:' && !e.message.includes('hunter2'), raw);
    }
  });

  it('GATEHOUSE_MAIL_FROM defaults to Gatehouse <no-reply@HOST>, HOST that of GATEHOUSE_AUTH_URL', () => {
    assert.equal(loadConfig({ GATEHOUSE_AUTH_URL: 'https://id.example.test/base' }).mailFrom, 'Gatehouse <no-reply@id.example.test>');
    assert.equal(loadConfig({ GATEHOUSE_AUTH_PORT: '0' }).mailFrom, 'Gatehouse <no-reply@127.0.0.1>');
    assert.equal(loadConfig({ GATEHOUSE_MAIL_FROM: 'id@example.test' }).mailFrom, 'id@example.test');
  });

  it('GATEHOUSE_MIGRATE: auto (default) or off; GATEHOUSE_SECRET_KEY_FILE: a readable file holding a key, never beside GATEHOUSE_SECRET_KEY', () => {
    assert.equal(loadConfig({}).migrate, 'auto');
    const badKey = join(DIR, 'bad-key');
    writeFileSync(badKey, 'short\n');
    const bad: [Record<string, string>, RegExp][] = [
      [{ GATEHOUSE_MIGRATE: 'manual' }, /^GATEHOUSE_MIGRATE must be one of auto, off, got "manual"$/],
      [{ GATEHOUSE_MIGRATE: 'true' }, /^GATEHOUSE_MIGRATE must be one of auto, off, got "true"$/],
      [{ GATEHOUSE_SECRET_KEY_FILE: join(DIR, 'missing') }, /^GATEHOUSE_SECRET_KEY_FILE: cannot read .*missing \(ENOENT\)$/],
      [{ GATEHOUSE_SECRET_KEY_FILE: badKey }, /^GATEHOUSE_SECRET_KEY_FILE \(.*bad-key\) must be 32 random bytes in base64/],
      [{ GATEHOUSE_SECRET_KEY_FILE: KEY_FILE, GATEHOUSE_SECRET_KEY: KEY }, /^GATEHOUSE_SECRET_KEY and GATEHOUSE_SECRET_KEY_FILE: set one of them, not both$/],
    ];
    for (const [env, message] of bad) {
      assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && message.test((e as Error).message), JSON.stringify(env));
    }
    // The key file's content never appears in a refusal (it is a secret, even when malformed).
    assert.throws(() => loadConfig({ GATEHOUSE_SECRET_KEY_FILE: badKey }), (e: unknown) => !(e as Error).message.includes('short'));
  });

  it('a bad flag value stops the command with the message on stderr', async () => {
    const r = await runCli(['client', 'list', '--webhook-timeout', '0'], { GATEHOUSE_DATABASE_URL: 'sqlite::memory:' });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'gatehouse: GATEHOUSE_WEBHOOK_TIMEOUT must be an integer from 1 to 300, got "0"\n');
  });

  it('`help settings` lists every setting with its flag', async () => {
    const r = await runCli(['help', 'settings'], {});
    assert.equal(r.code, 0);
    for (const name of SETTING_NAMES) assert.match(r.stdout, new RegExp(`--${flagOf(name)} +${name} `));
  });

  it('a config is read-only, deeply; the URLs for bound ports come as a new config', () => {
    const config = loadConfig({ GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_URL: 'https://api.example.test' });
    assert.throws(() => {
      (config as { authUrl: string }).authUrl = 'http://elsewhere.test';
    }, TypeError);
    assert.throws(() => {
      (config.botFlood.perChat as { rate: number }).rate = 99;
    }, TypeError);
    assert.throws(() => (config.roles as Set<string>).add('chef'), TypeError);
    const bound = withListeners(config, { auth: 4321, api: 4322 });
    assert.equal(config.authUrl, 'http://127.0.0.1:0');
    assert.equal(bound.authUrl, 'http://127.0.0.1:4321');
    // An explicit URL (a proxy's, say) stays as set.
    assert.equal(bound.apiUrl, 'https://api.example.test');
    assert.ok(Object.isFrozen(bound));
  });
});
