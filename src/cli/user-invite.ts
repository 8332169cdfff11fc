import { Signup } from '../core/account/signup.js';
import { invalidRequest } from '../core/errors.js';
import { Mailer } from '../core/mail/mailer.js';
import { rfc3339 } from '../core/notify/events.js';
import { systemClock } from '../core/ports.js';
import { argon2Hasher } from '../infra/argon2.js';
import { parserOptions } from './commands.js';
import type { CliHelpers } from './event-webhooks.js';

/** `--ttl S`: whole seconds only (Signup.invite checks the range, 60 s to 90 days). */
function ttlOf(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d{1,9}$/.test(v)) throw invalidRequest('--ttl must be a whole number of seconds from 60 to 7776000');
  return Number(v);
}

/**
 * `gatehouse user invite --email E [--admin] [--ttl S]` (issue 26 item 2): the
 * same Signup.invite as the console. The link's token is printed once (only its
 * hash is stored); with GATEHOUSE_SMTP_URL the e-mail is queued in the same
 * transaction and a running server's outbox sends it.
 */
export function userInviteCommands(h: CliHelpers): Record<string, (args: string[]) => Promise<void>> {
  return {
    'user invite': async (args) => {
      const { values } = h.parse(args, parserOptions('user invite'));
      if (typeof values.email !== 'string' || !values.email) throw invalidRequest('--email is required');
      const email = values.email;
      const ttlSeconds = ttlOf(values.ttl);
      const config = h.configFrom(values);
      const authUrl = config.authUrl.replace(/\/+$/, '');
      const r = await h.withStorage(config, (sql) => new Signup({
        transactions: sql.signupTransactions, invitations: sql.invitations, users: sql.users, limits: sql.rateLimits, hasher: argon2Hasher(), clock: systemClock,
        mailer: new Mailer(config.smtp !== undefined, systemClock, { name: 'Gatehouse', url: authUrl }), mode: config.signup, authUrl: () => authUrl,
      }).invite({ email, admin: values.admin === true, ...(ttlSeconds !== undefined ? { ttlSeconds } : {}), invitedBy: 'cli' }));
      const notes = [
        r.emailed ? `e-mailed to ${email}` : 'not e-mailed (GATEHOUSE_SMTP_URL is not set): send the link yourself',
        ...(config.signup === 'off' ? ['GATEHOUSE_SIGNUP is off: set it to invite or open for the link to work'] : []),
      ];
      h.print(Boolean(values.json), { url: r.url, expires_at: rfc3339(r.expiresAt) },
        `sign-up link for ${email}${values.admin === true ? ' (an administrator)' : ''}, single use, valid until ${rfc3339(r.expiresAt)}:\n${r.url}\n(${notes.join('; ')})`);
    },
  };
}
