import { z } from 'zod';
import { parseSecretKey } from './core/secret-box.js';

/**
 * Every setting, declared once: its environment variable, the flag derived
 * from it (`GATEHOUSE_AUTH_PORT` is `--auth-port`), its default, the zod
 * schema that checks and converts a set value (its messages name the
 * setting), and a one-line description. loadConfig (src/config.ts), the
 * command line's flags and `--help`, and the settings table of docs/deployment.md
 * (`npm run docs:settings`) are all made from this table.
 */
export interface Setting<T> {
  /** The default when the setting is unset or empty; `undefined`: unset. */
  readonly default: T | undefined;
  /** The default as docs/deployment.md shows it, when it depends on other settings. */
  readonly defaultText?: string;
  readonly description: string;
  /** Checks and converts a non-empty value. */
  readonly schema: z.ZodType<T, string>;
}

export type Role = 'auth' | 'api' | 'bot' | 'worker';
export const ROLES: readonly Role[] = ['auth', 'api', 'bot', 'worker'];
export type TokenVerification = 'table' | 'local' | 'introspection';
const TOKEN_VERIFICATIONS = ['table', 'local', 'introspection'] as const;
const LOG_FORMATS = ['json', 'text'] as const;
const REGISTRATION_MODES = ['off', 'token', 'open'] as const;
export type Registration = (typeof REGISTRATION_MODES)[number];
const SIGNUP_MODES = ['off', 'invite', 'open'] as const;
export type SignupSetting = (typeof SIGNUP_MODES)[number];
const MIGRATE_MODES = ['auto', 'off'] as const;
export type MigrateMode = (typeof MIGRATE_MODES)[number];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A message that names the setting and repeats the value it refused. */
const refused = (name: string, expected: string) => (issue: { input?: unknown }) => `${name} ${expected}, got "${String(issue.input)}"`;

const text = () => z.string();

function integer(name: string, min: number, max: number) {
  return z.string()
    .refine((raw) => Number.isInteger(Number(raw)) && Number(raw) >= min && Number(raw) <= max, { error: refused(name, `must be an integer from ${min} to ${max}`) })
    .transform(Number);
}

const port = (name: string) => integer(name, 0, 65535);

/** A non-negative rate (per second); 0 turns its limit off. */
function rate(name: string) {
  return z.string()
    .refine((raw) => Number.isFinite(Number(raw)) && Number(raw) >= 0 && Number(raw) <= 1e6, { error: refused(name, 'must be a number from 0 to 1000000') })
    .transform(Number);
}

/** A size in bytes: a number, or one with a unit (kB, MB, GB, TB are powers of 1000; KiB, MiB, GiB, TiB of 1024). */
const UNITS = new Map(Object.entries({ '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 }));
function byteSize(name: string) {
  const parse = (raw: string) => {
    const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw.trim());
    const unit = m ? UNITS.get(m[2]!.toLowerCase()) : undefined;
    return m && unit ? Math.floor(Number(m[1]) * unit) : NaN;
  };
  return z.string()
    .refine((raw) => Number.isSafeInteger(parse(raw)) && parse(raw) > 0, { error: refused(name, 'must be a size such as 500MB or 1GiB') })
    .transform(parse);
}

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];
function boolean(name: string) {
  return z.string()
    .refine((raw) => [...TRUE, ...FALSE].includes(raw.toLowerCase()), { error: refused(name, 'must be true or false') })
    .transform((raw) => TRUE.includes(raw.toLowerCase()));
}

/** An http(s) base URL, without trailing slashes. */
function httpUrl(name: string) {
  return z.url({ protocol: /^https?$/, error: refused(name, 'must be an http(s) URL') }).transform((u) => u.replace(/\/+$/, ''));
}

/** Where e-mail goes (GATEHOUSE_SMTP_URL): an SMTP server, or the server log (`log:`, for development). */
export type MailTransportSetting =
  | { readonly kind: 'log' }
  | { readonly kind: 'smtp'; readonly secure: boolean; readonly host: string; readonly port: number; readonly user: string | undefined; readonly pass: string | undefined };

/** `smtp://[user:pass@]host:port`, `smtps://…` or `log:`. A refused value is not repeated: it may hold the password. */
function smtpUrl(name: string) {
  const expected = `${name} must be smtp://[user:pass@]host:port, smtps://[user:pass@]host:port or log:`;
  return z.string().transform((raw, ctx): MailTransportSetting => {
    if (raw === 'log:') return { kind: 'log' };
    let u: URL | undefined;
    try {
      u = new URL(raw);
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') || !u.hostname || (u.pathname !== '' && u.pathname !== '/') || u.search || u.hash) {
      ctx.addIssue({ code: 'custom', message: expected });
      return z.NEVER;
    }
    const secure = u.protocol === 'smtps:';
    return {
      kind: 'smtp', secure, host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port ? Number(u.port) : secure ? 465 : 587,
      user: u.username ? decodeURIComponent(u.username) : undefined, pass: u.password ? decodeURIComponent(u.password) : undefined,
    };
  });
}

/** A From header: `address` or `Name <address>`, on one line. */
function mailFrom(name: string) {
  return z.string().regex(/^(?:[^<>@\r\n\u0000-\u001f\u007f]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/, { error: refused(name, 'must be an address or Name <address>') });
}

function oneOf<const V extends readonly [string, ...string[]]>(name: string, values: V) {
  return z.enum(values, { error: refused(name, `must be one of ${values.join(', ')}`) });
}

interface Declaration<T, Defaulted extends boolean> {
  default?: T;
  defaultText?: string;
  description: string;
  /** Gets the variable's name, for its messages. */
  schema: (name: string) => z.ZodType<T, string>;
  defaulted: Defaulted;
}
/** A setting with a default. */
const setting = <T>(s: Omit<Declaration<T, true>, 'defaulted'> & { default: T }): Declaration<T, true> => ({ ...s, defaulted: true });
/** A setting that may stay unset. */
const optional = <T>(s: Omit<Declaration<T, false>, 'defaulted' | 'default'>): Declaration<T, false> => ({ ...s, defaulted: false });

const DECLARED = {
  GATEHOUSE_DATABASE_URL: setting({
    default: 'sqlite:./data/gatehouse.db',
    description: '`sqlite:PATH`, `sqlite::memory:` or `postgres://…`',
    schema: (name) => z.string().regex(/^(sqlite:|postgres(ql)?:\/\/)/, { error: `${name} must be sqlite:PATH, sqlite::memory: or postgres://…` }),
  }),
  GATEHOUSE_REDIS_URL: optional({ description: 'when set: sessions, rate limits and cross-node wake-ups use Redis', schema: text }),
  GATEHOUSE_REDIS_PREFIX: setting({ default: 'gh:', description: 'prefix of every Redis key, so several deployments (or test runs) can share one Redis', schema: text }),
  GATEHOUSE_HOST: setting({ default: '127.0.0.1', description: 'address every listener binds', schema: text }),
  GATEHOUSE_AUTH_PORT: setting({ default: 8080, description: 'authorization server ({auth_url}); `0` picks a free port and the start log line names the URL', schema: port }),
  GATEHOUSE_API_PORT: setting({ default: 8081, description: 'resource server ({api_url})', schema: port }),
  GATEHOUSE_BOT_PORT: setting({ default: 8082, description: 'chat-bot interface ({bot_api_url}) and the chat web page', schema: port }),
  GATEHOUSE_ROLES: setting<ReadonlySet<Role>>({
    default: new Set(ROLES),
    defaultText: 'auth,api,bot,worker',
    description: 'which parts this process runs (scale-out runs them separately)',
    schema: (name) => z.string()
      .transform((raw) => raw.split(',').map((r) => r.trim()).filter(Boolean))
      .pipe(z.array(z.enum(ROLES as [Role, ...Role[]], { error: (issue) => `${name}: unknown role "${String(issue.input)}" (use ${ROLES.join(',')})` })))
      .transform((roles): ReadonlySet<Role> => new Set(roles)),
  }),
  GATEHOUSE_WORKERS: setting<number | 'auto'>({
    default: 1,
    description: 'processes that serve HTTP in one `serve`: a number, or `auto` (one per core). Above 1 the first process forks them (node:cluster), runs the migrations first and relays wake-ups, flood control and webhook leases between them; they share the database (not `sqlite::memory:`), sessions and rate limits. The notification worker runs in worker 1 only',
    schema: (name) => z.string()
      .refine((raw) => raw === 'auto' || (/^\d{1,3}$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 256), { error: refused(name, 'must be auto or an integer from 1 to 256') })
      .transform((raw) => (raw === 'auto' ? 'auto' as const : Number(raw))),
  }),
  GATEHOUSE_AUTH_URL: optional({ defaultText: 'http://127.0.0.1:<port>', description: 'public base URL of the authorization server; also the issuer', schema: httpUrl }),
  GATEHOUSE_API_URL: optional({ defaultText: 'http://127.0.0.1:<port>', description: 'public base URL of the resource server; the default `aud` of access tokens', schema: httpUrl }),
  GATEHOUSE_BOT_API_URL: optional({ defaultText: 'http://127.0.0.1:<port>', description: 'public base URL of the chat-bot interface', schema: httpUrl }),
  GATEHOUSE_ADMIN_TOKEN: optional({ description: 'bearer credential of the admin HTTP API (`/admin/…`, JSON; off when unset)', schema: text }),
  GATEHOUSE_SECRET_KEY: optional({
    description: '32 random bytes, base64 (`openssl rand -base64 32`): the key stored secrets are encrypted under (signing keys, webhook secrets, Bot API webhook `secret_token`s). Unset: a key file `secret.key` is created once (mode 0600) in the data folder (the SQLite file\'s folder; `./data` for PostgreSQL) and used from then on. Every process of one deployment needs the same key; a process with another one stops at start',
    schema: (name) => z.string().superRefine((raw, ctx) => {
      try {
        parseSecretKey(raw, name);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
      }
    }),
  }),
  GATEHOUSE_SECRET_KEY_FILE: optional({
    description: 'a file holding `GATEHOUSE_SECRET_KEY` (base64, surrounding white space ignored), e.g. a mounted container or systemd secret, so the key stays out of the environment; set one of the two, not both',
    schema: text,
  }),
  GATEHOUSE_MIGRATE: setting<MigrateMode>({
    default: 'auto',
    description: '`auto`: `serve` applies pending database migrations at start; `off`: `serve` refuses to start while any is pending and names them, and `gatehouse migrate` applies them (one step of an upgrade, before the new version is deployed: docs/deployment.md, "Upgrading")',
    schema: (name) => oneOf(name, MIGRATE_MODES),
  }),
  GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: setting({
    default: false,
    description: '`true` lets webhook URLs (Bot API `setWebhook`, notification endpoints) point at loopback and private-network addresses; otherwise they are refused (no server-side request forgery)',
    schema: boolean,
  }),
  GATEHOUSE_ACCESS_TOKEN_TTL: setting({ default: 3600, description: 'access token lifetime, seconds', schema: (name) => integer(name, 1, 2 ** 31) }),
  GATEHOUSE_CODE_TTL: setting({ default: 60, description: 'authorization code lifetime, seconds (at most 600)', schema: (name) => integer(name, 1, 600) }),
  GATEHOUSE_REFRESH_TOKEN_TTL: setting({ default: 30 * 24 * 3600, description: 'refresh token lifetime, seconds', schema: (name) => integer(name, 1, 2 ** 31) }),
  GATEHOUSE_SESSION_TTL: setting({ default: 12 * 3600, description: 'sign-in session lifetime, seconds (at least 60)', schema: (name) => integer(name, 60, 2 ** 31) }),
  GATEHOUSE_REAUTH_WINDOW: setting({
    default: 600,
    description: 'how recently the password or a second factor must have been given for a sensitive change (second factors, recovery codes, chat link and approval, password, e-mail, deletion), seconds; older sign-ins are asked again first',
    schema: (name) => integer(name, 30, 86400),
  }),
  GATEHOUSE_TOKEN_ENDPOINT_GET: setting({ default: false, description: 'accept GET on the token endpoint (credentials end up in logs: keep off)', schema: boolean }),
  GATEHOUSE_OPEN_TOKEN_KEY: setting({ default: false, description: 'open `/oauth/token_key` to unauthenticated callers (the keys are always at `/.well-known/jwks.json`)', schema: boolean }),
  GATEHOUSE_PAR_TTL: setting({ default: 60, description: "lifetime of a pushed authorization request's `request_uri`, seconds (at most 600)", schema: (name) => integer(name, 1, 600) }),
  GATEHOUSE_POLL_INTERVAL: setting({ default: 5, description: 'seconds a device (RFC 8628) or CIBA client must wait between token requests; polling faster answers `slow_down`', schema: (name) => integer(name, 1, 60) }),
  GATEHOUSE_REGISTRATION: setting<Registration>({
    default: 'off',
    description: 'dynamic client registration (RFC 7591, management RFC 7592) at `POST /oauth/register`: `off`, `token` (an initial access token from `gatehouse registration token`), or `open`',
    schema: (name) => oneOf(name, REGISTRATION_MODES),
  }),
  GATEHOUSE_SIGNUP: setting<SignupSetting>({
    default: 'off',
    description: 'people sign up themselves at `/signup`: `off`, `invite` (only through a link from `gatehouse user invite` or the console), or `open` (a proof of work and at most 5 sign-ups per address an hour)',
    schema: (name) => oneOf(name, SIGNUP_MODES),
  }),
  GATEHOUSE_PAR_REQUIRED: setting({ default: false, description: 'every client must push its authorization requests (RFC 9126); per client: `client create --require-par`', schema: boolean }),
  GATEHOUSE_TRUST_PROXY: setting<boolean | string>({
    default: false,
    description: 'trust `X-Forwarded-*` (`true`, or the proxy\'s addresses) behind a TLS-terminating proxy',
    schema: () => z.string().transform((raw) => (raw === 'true' ? true : raw === 'false' ? false : raw)),
  }),
  GATEHOUSE_LOG_LEVEL: setting({ default: 'info', description: `log level: ${LOG_LEVELS.join(', ')}`, schema: (name) => oneOf(name, LOG_LEVELS) }),
  GATEHOUSE_LOG_FORMAT: optional({
    defaultText: 'text on a terminal, json otherwise',
    description: '`json`: one JSON object a line (what log collectors read); `text`: plain lines and a start banner with the URLs and the next step. Unset: `text` when standard output is a terminal, `json` otherwise',
    schema: (name) => oneOf(name, LOG_FORMATS),
  }),
  GATEHOUSE_METRICS_PORT: optional({
    description: 'when set: `GET /metrics` on this port serves Prometheus metrics (requests, tokens, sign-ins, webhooks, Bot API, process); bound on `GATEHOUSE_HOST`, keep it off the public network',
    schema: port,
  }),
  GATEHOUSE_TOKEN_VERIFICATION: setting<TokenVerification>({
    default: 'table',
    description: 'how the resource server checks access tokens: `table` (a lookup; sees revocation), `local` (JWTs against the JWKS), `introspection` (RFC 7662)',
    schema: (name) => oneOf(name, TOKEN_VERIFICATIONS),
  }),
  GATEHOUSE_INTROSPECTION_CACHE_TTL: setting({ default: 5, description: 'seconds a token check is remembered by `table` and `introspection` (`0`: not at all)', schema: (name) => integer(name, 0, 3600) }),
  GATEHOUSE_INTROSPECTION_CLIENT_ID: optional({ description: 'client (created with `--introspect`) the resource server introspects as', schema: text }),
  GATEHOUSE_INTROSPECTION_CLIENT_SECRET: optional({ description: 'that client\'s secret', schema: text }),
  GATEHOUSE_BOT_FLOOD_CHAT_RATE: setting({ default: 1, description: 'Bot API flood control: messages per second per chat (`0`: no limit)', schema: rate }),
  GATEHOUSE_BOT_FLOOD_CHAT_BURST: setting({ default: 20, description: 'Bot API flood control: burst per chat', schema: (name) => integer(name, 1, 1_000_000) }),
  GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: setting({ default: 30, description: 'Bot API flood control: messages per second per bot (`0`: no limit)', schema: rate }),
  GATEHOUSE_BOT_FLOOD_GLOBAL_BURST: setting({ default: 30, description: 'Bot API flood control: burst per bot', schema: (name) => integer(name, 1, 1_000_000) }),
  GATEHOUSE_TLS_CERT: optional({ description: 'PEM certificate file: the authorization and resource servers serve HTTPS (with `GATEHOUSE_TLS_KEY`)', schema: text }),
  GATEHOUSE_TLS_KEY: optional({ description: 'PEM private key file of that certificate', schema: text }),
  GATEHOUSE_CLIENT_CERT_HEADER: optional<string | undefined>({
    description: 'behind a TLS-terminating proxy: the header carrying the client certificate (needs `GATEHOUSE_TRUST_PROXY`)',
    schema: (name) => z.string()
      .transform((raw) => raw.trim().toLowerCase() || undefined)
      .refine((h) => h === undefined || /^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(h), { error: refused(name, 'must be a header name') }),
  }),
  GATEHOUSE_PROVIDERS_FILE: optional({ description: 'JSON file of third-party login providers', schema: text }),
  GATEHOUSE_PROVIDERS: optional({ description: 'third-party login providers as inline JSON', schema: text }),
  GATEHOUSE_NOTIFY_BOT_TOKEN: optional({ description: 'bot token chat notifications are sent with (chat endpoints wait while unset)', schema: text }),
  GATEHOUSE_NOTIFY_BOT_API_URL: optional({ defaultText: '{bot_api_url}', description: 'the Bot API chat notifications go through (any Telegram-compatible one)', schema: httpUrl }),
  GATEHOUSE_FILES_DIR: optional({
    defaultText: '<data folder>/files',
    description: 'folder of the files bots send (photos, documents). Unset: `files` in the data folder (the SQLite file\'s folder; `./data` for PostgreSQL); a temporary folder for `sqlite::memory:`. Every process of one deployment needs the same folder (a shared mount)',
    schema: text,
  }),
  GATEHOUSE_BOT_FILE_QUOTA: setting({
    default: 1024 ** 3, defaultText: '1GiB',
    description: 'bytes the files one bot sends may add up to (`500MB`, `2GiB`, or bytes); past it an upload is refused with 400',
    schema: byteSize,
  }),
  GATEHOUSE_WEBHOOK_TIMEOUT: setting({ default: 15, description: 'seconds a webhook receiver (or the Bot API) gets to answer before the attempt counts as failed', schema: (name) => integer(name, 1, 300) }),
  GATEHOUSE_SMTP_URL: optional({
    description: 'where e-mail goes: `smtp://[user:pass@]host:port` (STARTTLS when the server offers it), `smtps://…` (TLS from the start), or `log:` (each message, links included, written to the server log: for development only). Sent from the outbox by the `worker` role, retried while the server is down. Unset: nothing is e-mailed',
    schema: smtpUrl,
  }),
  GATEHOUSE_MAIL_FROM: optional({ defaultText: 'Gatehouse <no-reply@HOST>', description: 'the From of every e-mail (`address` or `Name <address>`); HOST is the host of `GATEHOUSE_AUTH_URL`', schema: mailFrom }),
};

type Declared = typeof DECLARED;
export type SettingName = keyof Declared;
/** Each setting's value: its schema's output, `undefined` when it has no default and is unset. */
export type SettingValues = {
  readonly [K in SettingName]: Declared[K] extends Declaration<infer T, true> ? T : Declared[K] extends Declaration<infer T, false> ? T | undefined : never;
};

/** The table, with each schema built for its variable. */
export const SETTINGS: Readonly<Record<SettingName, Setting<unknown>>> = Object.freeze(Object.fromEntries(
  Object.entries(DECLARED).map(([name, s]: [string, Declaration<unknown, boolean>]) => [name, Object.freeze({
    default: s.default,
    defaultText: s.defaultText,
    description: s.description,
    schema: s.schema(name),
  })]),
) as Record<SettingName, Setting<unknown>>);

export const SETTING_NAMES = Object.keys(DECLARED) as SettingName[];

/** `GATEHOUSE_AUTH_PORT` → `auth-port` (the flag `--auth-port`). */
export const flagOf = (name: SettingName): string => name.slice('GATEHOUSE_'.length).toLowerCase().replace(/_/g, '-');

export type Source = Record<string, string | undefined>;

/**
 * Reads every setting from `src` (flags already merged over the
 * environment): unset or empty takes the default. Returns the first
 * problem's message instead when a value is refused.
 */
export function readSettings(src: Source): { values: SettingValues } | { error: string } {
  const values: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) {
    const s = SETTINGS[name];
    const raw = src[name];
    if (raw === undefined || raw === '') {
      values[name] = s.default;
      continue;
    }
    const r = s.schema.safeParse(raw);
    if (!r.success) return { error: r.error.issues[0]?.message ?? `${name} is not valid` };
    values[name] = r.data;
  }
  return { values: values as SettingValues };
}

const cell = (v: string) => v.replace(/\|/g, '\\|');

function defaultOf(s: Setting<unknown>): string {
  if (s.defaultText !== undefined) return `\`${s.defaultText}\``;
  if (s.default === undefined) return 'unset';
  return `\`${String(s.default)}\``;
}

/** The settings table of docs/deployment.md (markdown), made from the declarations. */
export function settingsTable(): string {
  const rows = SETTING_NAMES.map((name) => {
    const s = SETTINGS[name];
    return `| \`${name}\` | \`--${flagOf(name)}\` | ${defaultOf(s)} | ${cell(s.description)} |`;
  });
  return ['| variable | flag | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The settings part of `gatehouse --help`. */
export function settingsHelp(names: readonly SettingName[] = SETTING_NAMES): string {
  const width = Math.max(...SETTING_NAMES.map((n) => flagOf(n).length)) + 4;
  return names.map((name) => {
    const s = SETTINGS[name];
    const def = s.defaultText ?? (s.default === undefined ? 'unset' : String(s.default));
    return `  --${flagOf(name).padEnd(width)}${name} (default ${def}): ${s.description.replace(/`/g, '')}`;
  }).join('\n');
}
