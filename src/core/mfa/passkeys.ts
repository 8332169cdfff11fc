// eslint-disable-next-line no-restricted-imports -- a WebAuthn library, not our server module: '**/server' only matches its name.
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { randomToken, sha256 } from '../crypto.js';
import type { User } from '../model.js';
import type { Clock, UserStore } from '../ports.js';
import type { SecondFactors } from './factors.js';
import type { MfaStore } from './ports.js';

/** A ceremony's challenge lives this long (WebAuthn §13.4.3: a timeout the person can meet). */
const CHALLENGE_TTL_MS = 5 * 60_000;
export const PASSKEY_NAME_MAX = 64;
const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

// The WebAuthn library (with its X.509 and ASN.1 dependencies, a tenth of a start's modules) is
// loaded at the first passkey ceremony, not when the server starts.
let webauthn: Promise<typeof import('@simplewebauthn/server')> | undefined;
const library = () => (webauthn ??= import('@simplewebauthn/server'));

export interface PasskeyDeps {
  store: MfaStore;
  factors: SecondFactors;
  users: UserStore;
  clock: Clock;
  /** {auth_url}: its origin is the expected origin, its host the relying party id (INTERFACE.md). */
  authUrl: () => string;
}

/** Malformed input from a browser: a clear answer, never a 500. */
export class PasskeyError extends Error {
  override name = 'PasskeyError';
}

/**
 * Passkeys (WebAuthn Level 3 with @simplewebauthn/server): discoverable
 * credentials with user verification, so one is a whole sign-in (something
 * held and something known or been) without a password. Each ceremony's
 * challenge is stored by the hash of a random cookie and taken once.
 */
export class Passkeys {
  constructor(private readonly deps: PasskeyDeps) {}

  private rp() {
    const u = new URL(this.deps.authUrl());
    return { rpID: u.hostname, origin: u.origin };
  }

  private async challenge(userId: string | null, challenge: string): Promise<string> {
    const cookie = randomToken();
    await this.deps.store.putChallenge(sha256(cookie), { userId, challenge, expiresAt: this.deps.clock.now() + CHALLENGE_TTL_MS });
    return cookie;
  }

  /** Options for navigator.credentials.create(), and the cookie that holds the challenge. */
  async registrationOptions(user: User): Promise<{ options: unknown; cookie: string }> {
    const existing = await this.deps.store.listPasskeys(user.id);
    const { generateRegistrationOptions } = await library();
    const options = await generateRegistrationOptions({
      rpName: 'Gatehouse', rpID: this.rp().rpID, userName: user.username, userDisplayName: user.name ?? user.username,
      userID: new TextEncoder().encode(user.id), attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    return { options, cookie: await this.challenge(user.id, options.challenge) };
  }

  async register(user: User, cookie: string | undefined, name: string, response: unknown): Promise<void> {
    const c = cookie && cookie.length <= 128 ? await this.deps.store.takeChallenge(sha256(cookie), this.deps.clock.now()) : undefined;
    if (!c || c.userId !== user.id) throw new PasskeyError('This passkey request has expired. Try again.');
    const { rpID, origin } = this.rp();
    const { verifyRegistrationResponse } = await library();
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON, expectedChallenge: c.challenge, expectedOrigin: origin, expectedRPID: rpID, requireUserVerification: true,
      });
    } catch (e) {
      throw new PasskeyError(`The passkey was not accepted: ${(e as Error).message}`);
    }
    if (!verified.verified || !verified.registrationInfo) throw new PasskeyError('The passkey was not accepted.');
    const cred = verified.registrationInfo.credential;
    if (await this.deps.store.getPasskey(cred.id)) throw new PasskeyError('This passkey is already registered.');
    await this.deps.factors.addPasskey({
      id: cred.id, userId: user.id, name, publicKey: Buffer.from(cred.publicKey).toString('base64url'), counter: cred.counter,
      transports: (cred.transports ?? []).filter((t) => TRANSPORTS.has(t)), createdAt: this.deps.clock.now(), lastUsedAt: null,
    });
  }

  /** Options for navigator.credentials.get() without a username (discoverable credentials). */
  async signInOptions(): Promise<{ options: unknown; cookie: string }> {
    const { generateAuthenticationOptions } = await library();
    const options = await generateAuthenticationOptions({ rpID: this.rp().rpID, userVerification: 'required' });
    return { options, cookie: await this.challenge(null, options.challenge) };
  }

  /** The person the passkey belongs to, once its signature, challenge, origin and counter check out. */
  async signIn(cookie: string | undefined, response: unknown): Promise<User> {
    const c = cookie && cookie.length <= 128 ? await this.deps.store.takeChallenge(sha256(cookie), this.deps.clock.now()) : undefined;
    if (!c || c.userId !== null) throw new PasskeyError('This passkey request has expired. Try again.');
    const id = typeof response === 'object' && response !== null ? (response as { id?: unknown }).id : undefined;
    const key = typeof id === 'string' && id.length <= 1024 ? await this.deps.store.getPasskey(id) : undefined;
    if (!key) throw new PasskeyError('This passkey is not registered here.');
    const { rpID, origin } = this.rp();
    const { verifyAuthenticationResponse } = await library();
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response: response as AuthenticationResponseJSON, expectedChallenge: c.challenge, expectedOrigin: origin, expectedRPID: rpID, requireUserVerification: true,
        credential: { id: key.id, publicKey: new Uint8Array(Buffer.from(key.publicKey, 'base64url')), counter: key.counter, transports: key.transports },
      });
    } catch (e) {
      throw new PasskeyError(`The passkey was not accepted: ${(e as Error).message}`);
    }
    if (!verified.verified) throw new PasskeyError('The passkey was not accepted.');
    // A counter that did not move forward means a cloned authenticator (WebAuthn §6.1.1).
    if (!(await this.deps.store.usePasskey(key.id, verified.authenticationInfo.newCounter, this.deps.clock.now()))) {
      throw new PasskeyError('This passkey was refused: its signature counter went backwards.');
    }
    const user = await this.deps.users.get(key.userId);
    if (!user) throw new PasskeyError('This passkey is not registered here.');
    return user;
  }
}
