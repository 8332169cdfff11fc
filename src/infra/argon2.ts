import { hash, verify, type Algorithm } from '@node-rs/argon2';

/** Algorithm.Argon2id; the enum is const and cannot be imported under verbatimModuleSyntax. */
const ARGON2ID = 2 as Algorithm;
import type { PasswordHasher } from '../core/ports.js';

/** OWASP's argon2id minimum (m=19 MiB, t=2, p=1); raise with the settings below. */
export interface Argon2Options {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

export const owaspMinimum: Argon2Options = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

export function argon2Hasher(opts: Argon2Options = owaspMinimum): PasswordHasher {
  return {
    hash: (password) => hash(password, { algorithm: ARGON2ID, ...opts }),
    async verify(encoded, password) {
      try {
        return await verify(encoded, password);
      } catch {
        return false;
      }
    },
  };
}
