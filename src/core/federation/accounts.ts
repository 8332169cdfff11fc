import { randomBytes, randomUUID } from 'node:crypto';
import { randomToken, sha256 } from '../crypto.js';
import type { LoginGuard } from '../login.js';
import type { Clock } from '../ports.js';
import { USERNAME, usernameBase, type ExternalProfile } from './claims.js';
import { badSignIn } from './errors.js';
import { GatehouseError } from '../errors.js';
import type { FederationStorage } from './ports.js';
import { FLOW_TTL_MS } from './sign-in.js';

/**
 * The stored hash of an account that signs in only through a provider: not
 * an argon2 hash, so no password ever matches it.
 */
export const NO_PASSWORD = '!federated';

/** A first sign-in through a provider, waiting for the person to create or link an account. */
interface PendingFlow {
  kind: 'pending';
  profile: ExternalProfile;
  returnTo: string;
}

/**
 * A choice the person can correct (a taken username, a wrong password): the
 * form is shown again with the message beside the field. Not a
 * `GatehouseError`: it never becomes an error answer, only the same form's
 * next rendering (src/http/auth/federation-routes.ts).
 */
export class ChoiceError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
    this.name = 'ChoiceError';
  }
}

/**
 * Who an external account is here. A linked one signs in at once. A new one
 * waits for the person: create a local account (the username suggested from
 * the provider's, collisions resolved), or link an existing one, which they
 * must prove is theirs with its password. Nothing is ever linked because an
 * e-mail address or username matches: a provider's claims are not proof of
 * owning an account here.
 */
export class FederatedAccounts {
  constructor(private readonly deps: { storage: FederationStorage; login: LoginGuard; clock: Clock }) {}

  /** A linked user, or the handle of a pending first sign-in (for a cookie). */
  async signIn(profile: ExternalProfile, returnTo: string): Promise<{ userId: string } | { pending: string }> {
    const { storage, clock } = this.deps;
    const now = clock.now();
    const linked = await storage.identities.find(profile.provider, profile.subject);
    if (linked) {
      if (await storage.users.get(linked.userId)) {
        await storage.identities.touch(profile.provider, profile.subject, now);
        return { userId: linked.userId };
      }
      // The local account was deleted: the external one is new again.
      await storage.identities.unlink(profile.provider, profile.subject);
    }
    const handle = randomToken();
    const flow: PendingFlow = { kind: 'pending', profile, returnTo };
    await storage.flows.save(sha256(handle), JSON.stringify(flow), now + FLOW_TTL_MS, now);
    return { pending: handle };
  }

  /** The pending first sign-in behind a handle, with a free username to offer. */
  async pending(handle: string | undefined): Promise<{ profile: ExternalProfile; suggestion: string } | undefined> {
    const flow = await this.read(handle);
    return flow && { profile: flow.profile, suggestion: await this.freeUsername(usernameBase(flow.profile)) };
  }

  /** Creates a local account for the external one and links them, in one transaction. */
  async create(handle: string | undefined, username: string): Promise<{ userId: string; returnTo: string }> {
    if (!USERNAME.test(username)) throw new ChoiceError('A username is 1–64 letters, digits, dots, dashes or underscores, starting with a letter or digit.', 400);
    const flow = await this.read(handle);
    if (!flow) throw gone();
    const { storage, clock } = this.deps;
    if (await storage.users.findByUsername(username)) throw new ChoiceError(`The username ${username} is taken. Choose another.`, 409);
    const now = clock.now();
    const userId = randomUUID();
    try {
      await storage.transaction(async (tx) => {
        if (!(await tx.flows.take(sha256(handle!), now))) throw gone();
        await tx.users.create({
          id: userId, username, email: flow.profile.email ?? '', name: flow.profile.name ?? null, passwordHash: NO_PASSWORD, createdAt: now,
        });
        if (!(await tx.identities.link({ provider: flow.profile.provider, subject: flow.profile.subject, userId, createdAt: now, lastLoginAt: now }))) {
          throw badSignIn('This account was linked a moment ago. Sign in again.');
        }
      });
    } catch (e) {
      // Taken between the check and the insert (a concurrent sign-up): same answer as above.
      if (!(e instanceof GatehouseError && e.code !== 'conflict') && (await storage.users.findByUsername(username))) {
        throw new ChoiceError(`The username ${username} is taken. Choose another.`, 409);
      }
      throw e;
    }
    return { userId, returnTo: flow.returnTo };
  }

  /**
   * Links the external account to an existing local one, only once the
   * person signed in with that account's password (rate-limited and
   * recorded like any sign-in).
   */
  async link(handle: string | undefined, username: string, password: string, address: string): Promise<{ userId: string; returnTo: string }> {
    const flow = await this.read(handle);
    if (!flow) throw gone();
    if (!username || !password || username.length > 256 || password.length > 1024) throw new ChoiceError('Enter the username and password of your account.', 400);
    // The session that follows records the sign-in, with its sid (src/core/oidc/sso.ts).
    const outcome = await this.deps.login.attempt(username, password, address, { session: true });
    if (!outcome.ok) {
      if (outcome.reason === 'locked') throw new ChoiceError('Too many failed sign-in attempts. Wait 15 minutes and try again.', 429);
      throw new ChoiceError('Incorrect username or password.', 401);
    }
    // Linking with the password alone would let a third-party account skip the second factor.
    if (outcome.secondFactor) throw new ChoiceError('This account has a second factor. Sign in to it first; it cannot be linked with the password alone.', 403);
    const userId = outcome.user.id;
    const now = this.deps.clock.now();
    await this.deps.storage.transaction(async (tx) => {
      if (!(await tx.flows.take(sha256(handle!), now))) throw gone();
      if (!(await tx.identities.link({ provider: flow.profile.provider, subject: flow.profile.subject, userId, createdAt: now, lastLoginAt: now }))) {
        throw badSignIn('This account was linked a moment ago. Sign in again.');
      }
    });
    return { userId, returnTo: flow.returnTo };
  }

  private async read(handle: string | undefined): Promise<PendingFlow | undefined> {
    if (!handle || handle.length > 128) return undefined;
    const stored = await this.deps.storage.flows.get(sha256(handle), this.deps.clock.now());
    const flow = stored ? (JSON.parse(stored) as PendingFlow) : undefined;
    return flow?.kind === 'pending' ? flow : undefined;
  }

  /** `base`, else `base-2` … `base-9`, else `base-` and four random hex digits. */
  private async freeUsername(base: string): Promise<string> {
    const users = this.deps.storage.users;
    const candidates = [base, ...Array.from({ length: 8 }, (_, i) => `${base}-${i + 2}`)];
    for (const c of candidates) if (!(await users.findByUsername(c))) return c;
    return `${base}-${randomBytes(2).toString('hex')}`;
  }
}

const gone = () => badSignIn('This sign-in has expired. Start again from the sign-in page.');
