/**
 * A client's name is shown to people on the consent page and in chat prompts
 * ("App “name” asks for your permission"), so it must not be able to pass for
 * Gatehouse's own words: one line of at most 100 characters, without control
 * characters, line or paragraph separators, or bidirectional overrides (which
 * could reorder the text around it). The one check of every way a client gets
 * a name: `client create`, the console, the admin API, dynamic registration
 * and its updates (RFC 7592).
 */
export const CLIENT_NAME_MAX = 100;

/** Cc (C0, DEL, C1), U+2028/U+2029, and the bidi marks, embeddings, overrides and isolates (Unicode UAX #9). */
const FORBIDDEN = /[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** The name as stored (surrounding spaces removed), or what is wrong with it. */
export function checkClientName(raw: unknown): { name: string } | { problem: string } {
  if (typeof raw !== 'string') return { problem: 'the client name must be a string' };
  const name = raw.trim();
  if (!name) return { problem: 'the client name is required' };
  if (FORBIDDEN.test(name)) return { problem: 'the client name must be one line without control characters' };
  // Code points, not UTF-16 units: an emoji counts as one character.
  if ([...name].length > CLIENT_NAME_MAX) return { problem: `the client name is at most ${CLIENT_NAME_MAX} characters` };
  return { name };
}

/**
 * A client name quoted for a message from Gatehouse: clients stored before
 * the check above are made one line and cut to size here, and typographic
 * quotes inside it become plain ones so the name cannot close its quotes.
 */
export function quotedClientName(name: string): string {
  const line = [...name.replace(new RegExp(FORBIDDEN.source, 'gu'), ' ').replace(/\s+/g, ' ').trim()];
  const short = line.length > CLIENT_NAME_MAX ? `${line.slice(0, CLIENT_NAME_MAX - 1).join('')}…` : line.join('');
  return `“${short.replace(/[“”„]/g, '"')}”`;
}
