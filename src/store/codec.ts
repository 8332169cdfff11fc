/** Column encodings shared by the stores. */
export const words = (s: string): string[] => (s ? s.split(' ') : []);
export const joinWords = (a: readonly string[]): string => a.join(' ');
export const flag = (b: boolean): number => (b ? 1 : 0);

/** A unique or primary-key violation: SQLite SQLITE_CONSTRAINT_*, PostgreSQL 23505 unique_violation. */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
