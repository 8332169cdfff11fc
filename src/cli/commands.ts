import { flagOf, settingsHelp, SETTING_NAMES, type SettingName } from '../settings.js';

/**
 * Every command's own options, declared once: the parser (src/cli/main.ts,
 * src/cli/event-webhooks.ts) reads their types from here and `--help`
 * prints their descriptions, so the two cannot disagree. The settings
 * flags every command also takes come from src/settings.ts.
 */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  /** The placeholder shown after a string flag (`--name N`). */
  readonly arg?: string;
  readonly help: string;
}

export interface CommandSpec {
  readonly summary: string;
  /** Extra lines after the options: constraints between them, an example. */
  readonly notes?: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** The settings this command reads; `all` for serve. */
  readonly settings: readonly SettingName[] | 'all';
}

const STORAGE: readonly SettingName[] = ['GATEHOUSE_DATABASE_URL', 'GATEHOUSE_SECRET_KEY', 'GATEHOUSE_SECRET_KEY_FILE'];
const str = (arg: string, help: string, multiple = false): OptionSpec => ({ type: 'string', arg, help, ...(multiple ? { multiple } : {}) });
const flag = (help: string): OptionSpec => ({ type: 'boolean', help });
const endpointId = str('E', 'the webhook endpoint id (`webhook list` shows them)');
const messageId = str('M', 'the message (event) id (`webhook messages` shows them)');

export const COMMAND_SPECS = {
  serve: {
    summary: 'run the configured roles (default: all): the authorization server, the resource server, the chat-bot interface and the notification worker',
    notes: 'On a terminal the start prints a plain-text banner; otherwise (and with GATEHOUSE_LOG_FORMAT=json) every line is JSON. SIGTERM or Ctrl+C stops it after in-flight requests.',
    options: {},
    settings: 'all',
  },
  migrate: {
    summary: 'apply the pending database migrations, print their names and exit (with GATEHOUSE_MIGRATE=off, serve only checks that none is pending)',
    notes: 'example: gatehouse migrate --json   prints {"applied":["0027_mail"]}; {"applied":[]} when the database was up to date. Upgrading several processes: docs/deployment.md, "Upgrading"',
    options: {},
    settings: STORAGE,
  },
  'user create': {
    summary: 'create a user who signs in with a username and password',
    notes: 'example: echo \'a long password\' | gatehouse user create --username alice --email alice@example.com --password-stdin',
    options: {
      username: str('U', 'sign-in name (required; unique, any case)'),
      email: str('E', 'e-mail address (required)'),
      name: str('N', 'display name shown on the consent and account pages'),
      'password-stdin': flag('read the password from standard input (required: a password is never an argument, so it stays out of shell history)'),
      admin: flag('an administrator: may sign in to the admin console at {auth_url}/admin'),
    },
    settings: STORAGE,
  },
  'user lock': {
    summary: 'lock an account: every session ends and every refresh token and stored access token is revoked now; it cannot sign in until unlocked',
    notes: 'example: gatehouse user lock --username alice --json',
    options: { username: str('U', 'the account\'s username (required)') },
    settings: [...STORAGE, 'GATEHOUSE_REDIS_URL', 'GATEHOUSE_REDIS_PREFIX'],
  },
  'user unlock': {
    summary: 'let a locked account sign in again (its old sessions and tokens stay ended)',
    notes: 'example: gatehouse user unlock --username alice --json',
    options: { username: str('U', 'the account\'s username (required)') },
    settings: [...STORAGE, 'GATEHOUSE_REDIS_URL', 'GATEHOUSE_REDIS_PREFIX'],
  },
  'user list': {
    summary: 'list the accounts: id, username, e-mail, whether it is verified, locked, an administrator, when created',
    notes: 'example: gatehouse user list --json   prints {"users":[{"id","username","email","email_verified","name","locked","admin","created_at"}, …]}',
    options: { search: str('S', 'only accounts whose username or e-mail address starts with S (any case)') },
    settings: STORAGE,
  },
  'user set-password': {
    summary: 'set a new password for an account: every session ends and every refresh token is revoked; the person is told in their linked chat and by e-mail',
    notes: 'example: echo \'a long password\' | gatehouse user set-password --username alice --password-stdin --json',
    options: {
      username: str('U', 'the account\'s username (required)'),
      'password-stdin': flag('read the new password from standard input (required)'),
    },
    settings: [...STORAGE, 'GATEHOUSE_REDIS_URL', 'GATEHOUSE_REDIS_PREFIX', 'GATEHOUSE_SMTP_URL'],
  },
  'user delete': {
    summary: 'delete an account and its personal data: sessions end, tokens are revoked, second factors, consents, linked chats and third-party links go',
    notes: 'example: gatehouse user delete --username alice --json',
    options: { username: str('U', 'the account\'s username (required)') },
    settings: [...STORAGE, 'GATEHOUSE_REDIS_URL', 'GATEHOUSE_REDIS_PREFIX', 'GATEHOUSE_SMTP_URL'],
  },
  'user invite': {
    summary: 'invite a person to sign up (GATEHOUSE_SIGNUP=invite or open): prints a single-use sign-up link, also e-mailed to them when GATEHOUSE_SMTP_URL is set',
    notes: 'example: gatehouse user invite --email bob@example.com --ttl 86400 --json   prints {"url","expires_at"}',
    options: {
      email: str('E', 'the address the link is for (required); signing up through the link verifies it'),
      admin: flag('the new account is an administrator of the admin console'),
      ttl: str('S', 'seconds the link stays valid, 60 to 7776000 (default 604800: 7 days)'),
    },
    settings: [...STORAGE, 'GATEHOUSE_AUTH_URL', 'GATEHOUSE_SIGNUP', 'GATEHOUSE_SMTP_URL'],
  },
  'client create': {
    summary: 'register an OAuth client (application); prints its id and, for a confidential client, its secret once',
    notes: 'example: gatehouse client create --name "My app" --redirect-uri http://127.0.0.1:8080/demo/callback --scope user --json',
    options: {
      name: str('N', 'name shown on the consent page (required)'),
      'redirect-uri': str('U', 'where the authorization code is sent; repeat for several (required for authorization_code)', true),
      'grant-types': str('a,b', 'comma-separated grants: authorization_code, refresh_token, client_credentials, … (default authorization_code,refresh_token)'),
      scope: str('"s1 s2"', 'the scopes it may ask for, space-separated'),
      public: flag('a public client (a browser or mobile app): no secret, PKCE required'),
      'auth-method': str('M', 'token endpoint authentication: client_secret_basic (default), client_secret_post, client_secret_jwt, private_key_jwt, self_signed_tls_client_auth, none'),
      trusted: flag('first-party: sign-in skips the consent page'),
      introspect: flag('may call the introspection endpoint (RFC 7662), e.g. a resource server'),
      domain: str('D', 'every redirect URI must be on this host'),
      'token-format': str('jwt|opaque', 'access token format (default jwt)'),
      'post-logout-redirect-uri': str('U', 'where RP-initiated logout may return; repeat for several', true),
      'backchannel-logout-uri': str('U', 'receives OpenID Connect back-channel logout tokens'),
      'tls-client-certificate': str('FILE', 'PEM certificate the client presents (mutual TLS, RFC 8705)'),
      'allowed-addresses': str('CIDR,…', 'the token endpoint accepts this client only from these addresses'),
      'id-token-alg': str('ES256|RS256', 'ID token signing algorithm'),
      'require-par': flag('its authorization requests must be pushed first (RFC 9126)'),
      dpop: flag('its access tokens must be DPoP-bound: every token request carries a DPoP proof (RFC 9449)'),
      'public-token-exchange': flag('a public client (--public) may use token exchange (RFC 8693); without it only confidential clients may'),
      jwks: str('JSON', 'its public keys, for --auth-method private_key_jwt'),
      'jwks-uri': str('U', 'where its public keys are published, for --auth-method private_key_jwt'),
      resource: str('U', 'a resource (API URI) it may ask tokens for with RFC 8707 `resource`, beside {api_url}; repeat for several', true),
      'backchannel-token-delivery-mode': str('poll|ping', 'how a CIBA client learns the person decided (OpenID Connect CIBA)'),
      'backchannel-notification-endpoint': str('U', 'where ping mode notifies a CIBA client'),
    },
    settings: STORAGE,
  },
  'client list': { summary: 'list the registered clients', options: {}, settings: STORAGE },
  'registration token': {
    summary: 'make an initial access token for dynamic client registration (POST /oauth/register with GATEHOUSE_REGISTRATION=token); printed once, stored as a hash',
    notes: 'example: gatehouse registration token --ttl 3600 --uses 5 --json',
    options: {
      ttl: str('S', 'seconds it stays valid, 60 to 2592000 (default 86400)'),
      uses: str('N', 'how many clients it may register, 1 to 1000 (default 1: single use)'),
    },
    settings: [...STORAGE, 'GATEHOUSE_REGISTRATION'],
  },
  'keys rotate': {
    summary: 'make a new token signing key; the previous keys stay published until every token they signed has expired',
    options: {},
    settings: [...STORAGE, 'GATEHOUSE_ACCESS_TOKEN_TTL'],
  },
  'bot create': {
    summary: 'create a chat bot owned by a user; prints its Bot API token once',
    notes: 'example: gatehouse bot create --owner alice --username weather_bot --name "Weather"',
    options: {
      owner: str('U', 'username or id of the user who owns the bot (required)'),
      username: str('X_bot', 'the bot\'s username, ending in "bot" (required)'),
      name: str('N', 'the bot\'s display name (required)'),
    },
    settings: STORAGE,
  },
  'webhook create': {
    summary: 'subscribe an HTTPS endpoint (or an operations chat) to events (Standard Webhooks); prints its signing secret once',
    notes: 'give exactly one of --url and --chat-id',
    options: {
      url: str('U', 'the receiver\'s URL'),
      'chat-id': str('C', 'send the events as chat messages to this chat instead (with GATEHOUSE_NOTIFY_BOT_TOKEN)'),
      events: str('e1,e2|*', 'the event types to send, comma-separated, or * for all (required)'),
      ordered: flag('deliver one at a time, in order (a failing message holds back the next)'),
      description: str('D', 'a note for operators'),
    },
    settings: [...STORAGE, 'GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS'],
  },
  'webhook list': { summary: 'list the webhook endpoints', options: {}, settings: STORAGE },
  'webhook enable': { summary: 'enable an endpoint again', options: { id: endpointId }, settings: STORAGE },
  'webhook disable': { summary: 'stop delivering to an endpoint; its pending messages go to the dead-letter list', options: { id: endpointId }, settings: STORAGE },
  'webhook delete': { summary: 'delete an endpoint', options: { id: endpointId }, settings: STORAGE },
  'webhook rotate-secret': {
    summary: 'new signing secret for an endpoint; the previous one keeps signing for 24 hours',
    options: { id: endpointId },
    settings: STORAGE,
  },
  'webhook messages': {
    summary: 'list an endpoint\'s messages and their delivery state',
    options: {
      id: endpointId,
      status: str('S', 'only messages in this state: pending, delivered or failed'),
      since: str('T', 'only messages since this time (RFC 3339, e.g. 2026-01-31T12:00:00Z)'),
      limit: str('N', 'at most this many, 1 to 1000 (default 50)'),
    },
    settings: STORAGE,
  },
  'webhook inspect': { summary: 'show one message with its event and every delivery attempt', options: { id: endpointId, message: messageId }, settings: STORAGE },
  'webhook resend': { summary: 'queue one message again', options: { id: endpointId, message: messageId }, settings: STORAGE },
  'webhook replay': {
    summary: 'queue every failed message since a time again',
    options: { id: endpointId, since: str('T', 'from this time (RFC 3339) (required)') },
    settings: STORAGE,
  },
  'group create': {
    summary: 'create a group of people (released as the `groups` claim; roles can be granted to it)',
    notes: 'example: gatehouse group create --name ops --json   prints {"id":"…","name":"ops"}',
    options: { name: str('G', 'the group\'s name (required; unique in any case; letters, digits, . _ : -)') },
    settings: STORAGE,
  },
  'group add': { summary: 'add a person to a group', options: { group: str('G', 'the group (required)'), username: str('U', 'the person (required)'), user: str('U', 'the same as --username') }, settings: STORAGE },
  'group remove': { summary: 'remove a person from a group', options: { group: str('G', 'the group (required)'), username: str('U', 'the person (required)'), user: str('U', 'the same as --username') }, settings: STORAGE },
  'group list': { summary: 'list the groups with their members', options: {}, settings: STORAGE },
  'role create': {
    summary: 'create a role (released as the `roles` claim); with --approvers, people may ask for it at /account/access and the group approves in chat',
    notes: 'example: gatehouse role create --name deploy --approvers ops --approvals 2 --max-minutes 60',
    options: {
      name: str('R', 'the role\'s name (required; unique in any case; letters, digits, . _ : -)'),
      approvers: str('G', 'a group whose members approve requests for the role in their linked chat'),
      approvals: str('K', 'approvals needed, never the asker\'s own, 1 to 10 (default 1)'),
      'max-minutes': str('M', 'the longest a request may hold the role, 1 to 1440 (default 60)'),
    },
    settings: STORAGE,
  },
  'role grant': {
    summary: 'grant a role to a person or to every member of a group',
    options: { role: str('R', 'the role (required)'), username: str('U', 'the person'), user: str('U', 'the same as --username'), group: str('G', 'the group (instead of --username)') },
    settings: STORAGE,
  },
  'role revoke': {
    summary: 'take a role granted to a person or a group back',
    options: { role: str('R', 'the role (required)'), username: str('U', 'the person'), user: str('U', 'the same as --username'), group: str('G', 'the group (instead of --username)') },
    settings: STORAGE,
  },
  'role list': { summary: 'list the roles with whom they are granted to', options: {}, settings: STORAGE },
  'secret-key rotate': {
    summary: 're-encrypt stored secrets under a new key (stop every process first)',
    options: { 'new-key-stdin': flag('read the new key (32 bytes, base64) from standard input instead of making one') },
    settings: STORAGE,
  },
} satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMAND_SPECS;
export const COMMAND_NAMES = Object.keys(COMMAND_SPECS) as CommandName[];

/** The parseArgs options of a command (its own; main.ts adds --json and the settings flags). */
export function parserOptions(name: CommandName): Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> {
  const spec: CommandSpec = COMMAND_SPECS[name];
  return Object.fromEntries(Object.entries(spec.options).map(([k, o]) => [k, { type: o.type, ...(o.multiple ? { multiple: true } : {}) }]));
}

const optionLabel = (k: string, o: OptionSpec) => `--${k}${o.type === 'string' ? ` ${o.arg ?? 'V'}` : ''}${o.multiple ? ' …' : ''}`;

/** `gatehouse <command> --help`. */
export function commandHelp(name: CommandName): string {
  const spec: CommandSpec = COMMAND_SPECS[name];
  const opts = Object.entries(spec.options);
  const width = Math.max(10, ...opts.map(([k, o]) => optionLabel(k, o).length)) + 2;
  const line = (label: string, help: string) => `  ${label.padEnd(width)}${help}`;
  const settings = spec.settings === 'all' ? SETTING_NAMES : spec.settings;
  return [
    `usage: gatehouse ${name}${opts.length ? ' [options]' : ''} [--json] [settings]`,
    '',
    `${spec.summary}.`,
    ...(spec.notes ? ['', spec.notes] : []),
    '',
    'options:',
    ...opts.map(([k, o]) => line(optionLabel(k, o), o.help)),
    line('--json', 'print the result as one JSON object (for scripts)'),
    line('--help', 'this help'),
    '',
    spec.settings === 'all'
      ? 'settings (flags first, then GATEHOUSE_* environment variables, then defaults):'
      : `settings it reads (flags or GATEHOUSE_* environment variables; \`gatehouse help settings\` lists all ${SETTING_NAMES.length}):`,
    settingsHelp(settings),
  ].join('\n');
}

/** `gatehouse --help`: every command in one line; the settings have a page of their own (`gatehouse help settings`). */
export function overviewHelp(): string {
  const width = Math.max(...COMMAND_NAMES.map((n) => n.length)) + 2;
  return [
    'usage: gatehouse <command> [options] [--json]',
    '       gatehouse <command> --help    (or: gatehouse help <command>) explains each option',
    '       gatehouse --version',
    '',
    'commands:',
    ...COMMAND_NAMES.map((n) => `  ${n.padEnd(width)}${COMMAND_SPECS[n].summary}`),
    '',
    `Settings (${SETTING_NAMES.length}) come from flags (--auth-port 0), then GATEHOUSE_* environment variables, then defaults:`,
    '`gatehouse help settings` lists them; each command\'s --help names the ones it reads.',
  ].join('\n');
}

/** Edit distance counting a swap of two neighbours as one edit (optimal string alignment), for "did you mean". */
export function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The command a mistyped one was probably meant to be, when one is near. */
export function closestCommand(words: readonly string[]): CommandName | undefined {
  const typed = words.filter((w) => !w.startsWith('-')).slice(0, 2);
  if (typed.length === 0) return undefined;
  let best: { name: CommandName; d: number } | undefined;
  for (const name of COMMAND_NAMES) {
    const parts = name.split(' ');
    // Compare as many words as the command has: `client craete x` against `client create`.
    const d = distance(typed.slice(0, parts.length).join(' ').toLowerCase(), name);
    if (!best || d < best.d) best = { name, d };
  }
  if (best && best.d <= Math.max(2, Math.floor(best.name.length / 4))) return best.name;
  // A group word with no or a far subcommand (`gatehouse keys`, `gatehouse webhook show`): the group's nearest command.
  const group = COMMAND_NAMES.filter((n) => n.startsWith(`${typed[0]!.toLowerCase()} `));
  if (group.length === 0) return undefined;
  const sub = typed[1]?.toLowerCase() ?? '';
  return group.map((name) => ({ name, d: distance(sub, name.split(' ')[1]!) })).sort((x, y) => x.d - y.d)[0]!.name;
}

export const flagNameOf = (name: SettingName) => `--${flagOf(name)}`;
