import { createChallenge, verifySolution } from 'altcha-lib/v1';
import { sha256 } from '../crypto.js';
import type { Clock } from '../ports.js';

/** Replays are kept out by remembering each solved challenge until it expires (insert-once). */
export interface SolvedChallenges {
  remember(key: string, expiresAt: number, now: number): Promise<boolean>;
}

/** The challenge a page embeds for its script to solve (ALTCHA's v1 format). */
export interface Challenge {
  algorithm: string;
  challenge: string;
  maxnumber: number;
  salt: string;
  signature: string;
}

/**
 * A proof of work before sign-up and after repeated failed sign-ins: ALTCHA's
 * SHA-256 challenge (find the number n ≤ maxnumber with SHA-256(salt ‖ n) =
 * challenge), made and checked here with altcha-lib under an HMAC key derived
 * from the deployment's secret key; no outside service is called. The page's
 * own script solves it (src/http/auth/static/pow.js). A solution counts once:
 * its challenge is remembered until it expires.
 */
export class ProofOfWork {
  constructor(
    private readonly hmacKey: string,
    private readonly solved: SolvedChallenges,
    private readonly clock: Clock,
    /** About 0.1–1 s of SHA-256 in a browser on average at 50,000; the cost grows linearly. */
    readonly maxNumber = 50_000,
    readonly ttlMs = 10 * 60_000,
  ) {}

  challenge(): Promise<Challenge> {
    return createChallenge({ hmacKey: this.hmacKey, maxnumber: this.maxNumber, expires: new Date(this.clock.now() + this.ttlMs) }) as Promise<Challenge>;
  }

  /** The form's `altcha` field (base64 JSON of the solution): true once per solved, unexpired challenge of ours. */
  async verify(payload: string | undefined): Promise<boolean> {
    if (!payload || payload.length > 2048) return false;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
    } catch {
      return false;
    }
    if (!parsed || typeof parsed !== 'object') return false;
    const p = parsed as Record<string, unknown>;
    // Only our own algorithm, and only salts that carry an expiry (ours always do).
    if (p.algorithm !== 'SHA-256' || typeof p.challenge !== 'string' || typeof p.salt !== 'string' || typeof p.signature !== 'string'
      || !Number.isSafeInteger(p.number) || !/[?&]expires=\d+/.test(p.salt)) return false;
    const solution = { algorithm: 'SHA-256' as const, challenge: p.challenge, salt: p.salt, signature: p.signature, number: p.number as number };
    if (!(await verifySolution(solution, this.hmacKey, true))) return false;
    const expires = Number(/[?&]expires=(\d+)/.exec(p.salt)![1]) * 1000;
    const now = this.clock.now();
    return this.solved.remember(`altcha:${sha256(p.challenge)}`, Math.max(expires, now) + 60_000, now);
  }
}
