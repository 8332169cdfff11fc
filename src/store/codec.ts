/** Column encodings shared by the stores. */
export const words = (s: string): string[] => (s ? s.split(' ') : []);
export const joinWords = (a: readonly string[]): string => a.join(' ');
export const flag = (b: boolean): number => (b ? 1 : 0);
