import type { Algorithm } from '@node-rs/argon2';
import type { PasswordHasher } from '../core/ports.js';

/** Algorithm.Argon2id; the enum is const and cannot be imported under verbatimModuleSyntax. */
const ARGON2ID = 2 as Algorithm;

/** OWASP's argon2id minimum (m=19 MiB, t=2, p=1); raise with the settings below. */
export interface Argon2Options {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

export const owaspMinimum: Argon2Options = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

// The native binding is loaded at the first hash or check, not at start: a process that
// signs nobody in (a worker of the bot role, the resource server) never needs it.
let binding: Promise<typeof import('@node-rs/argon2')> | undefined;
const argon2 = () => (binding ??= import('@node-rs/argon2'));

export function argon2Hasher(opts: Argon2Options = owaspMinimum): PasswordHasher {
  return {
    hash: async (password) => (await argon2()).hash(password, { algorithm: ARGON2ID, ...opts }),
    async verify(encoded, password) {
      const { verify } = await argon2();
      try {
        return await verify(encoded, password);
      } catch {
        return false;
      }
    },
  };
}
