/**
 * What the admin console needs of storage beyond the stores the JSON admin
 * API and the command line already use (src/core/ports.ts): who is an
 * administrator, which accounts are locked, and lists for the pages.
 */
export interface ConsoleUser {
  id: string;
  username: string;
  email: string;
  name: string | null;
  createdAt: number;
  admin: boolean;
  /** When an administrator locked the account; null when it may sign in. */
  lockedAt: number | null;
}

export interface ConsoleBot {
  id: number;
  username: string;
  name: string;
  owner: string | null;
  webhookUrl: string | null;
  lastErrorDate: number | null;
  lastErrorMessage: string | null;
}

export interface ConsoleStore {
  isAdmin(userId: string): Promise<boolean>;
  /** False when there is no such user. */
  setAdmin(userId: string, admin: boolean): Promise<boolean>;
  isLocked(userId: string): Promise<boolean>;
  /** `at` null unlocks. False when there is no such user. */
  setLocked(userId: string, at: number | null): Promise<boolean>;
  getUser(userId: string): Promise<ConsoleUser | undefined>;
  /** Ordered by username; `search` matches the start of a username or e-mail address, any case. */
  listUsers(opts: { limit: number; offset: number; search?: string }): Promise<ConsoleUser[]>;
  listBots(limit: number): Promise<ConsoleBot[]>;
}
