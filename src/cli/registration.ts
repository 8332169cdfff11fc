import { invalidRequest } from '../core/errors.js';
import { systemClock } from '../core/ports.js';
import { DynamicRegistration } from '../core/oauth/registration.js';
import { rfc3339 } from '../core/notify/events.js';
import type { CliHelpers } from './event-webhooks.js';
import { parserOptions } from './commands.js';

/** A whole number from `min` to `max`, or the default when the flag is absent. */
function count(v: unknown, flag: string, min: number, max: number, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (typeof v !== 'string' || !/^\d+$/.test(v) || n < min || n > max) throw invalidRequest(`--${flag} must be a whole number from ${min} to ${max}`);
  return n;
}

/** `gatehouse registration token`: an initial access token for POST /oauth/register (RFC 7591 §3). */
export function registrationCommands(h: CliHelpers): Record<string, (args: string[]) => Promise<void>> {
  return {
    'registration token': async (args) => {
      const { values } = h.parse(args, parserOptions('registration token'));
      const ttl = count(values.ttl, 'ttl', 60, 30 * 86_400, 86_400);
      const uses = count(values.uses, 'uses', 1, 1000, 1);
      const config = h.configFrom(values);
      const { token, expiresAt } = await h.withStorage(config, (s) => DynamicRegistration.issueInitialToken(s.registration, systemClock, ttl, uses));
      const warn = config.registration === 'token' ? '' : `\n(GATEHOUSE_REGISTRATION is ${config.registration}: set it to token for the token to be asked for)`;
      h.print(Boolean(values.json), { token, expires_at: rfc3339(expiresAt), uses },
        `initial access token: ${token}\nvalid until ${rfc3339(expiresAt)} for ${uses} registration${uses === 1 ? '' : 's'} (shown once; only its hash is stored)${warn}`);
    },
  };
}
