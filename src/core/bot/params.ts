import { badRequest } from './errors.js';

/**
 * Method parameters as the HTTP edge merged them (query string, then form,
 * JSON or multipart body). JSON bodies bring numbers, booleans and nested
 * objects; the others bring strings, where nested objects arrive as JSON text.
 */
export type BotParams = Record<string, unknown>;

export function str(p: BotParams, name: string): string | undefined {
  const v = p[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return typeof v[v.length - 1] === 'string' ? (v[v.length - 1] as string) : JSON.stringify(v);
  return JSON.stringify(v);
}

/**
 * Integers are read leniently, as the official server does: a leading
 * integer is taken, anything else counts as 0.
 */
export function int(p: BotParams, name: string, fallback: number): number {
  const v = p[name];
  if (v === undefined || v === null || v === '') return fallback;
  if (typeof v === 'number') return Number.isFinite(v) ? Math.trunc(v) : 0;
  if (typeof v === 'boolean') return v ? 1 : 0;
  const m = /^\s*([+-]?\d+)/.exec(String(v));
  if (!m) return 0;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : 0;
}

/** A strict integer (identifiers), undefined when absent or not an integer. */
export function id(p: BotParams, name: string): number | undefined {
  const v = p[name];
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  if (typeof v === 'string' && /^\s*-?\d{1,16}\s*$/.test(v)) return Number(v);
  return undefined;
}

export function bool(p: BotParams, name: string): boolean {
  const v = p[name];
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return ['true', '1', 'yes', 'on'].includes(v.trim().toLowerCase());
  return false;
}

/** Nested objects may come as objects (JSON body) or as JSON strings (form, query). */
export function json(p: BotParams, name: string, what = name): unknown {
  const v = p[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    throw badRequest(`can't parse ${what} JSON object`);
  }
}

/** A list of strings (allowed_updates); undefined when absent. */
export function stringList(p: BotParams, name: string): string[] | undefined {
  const v = json(p, name);
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw badRequest(`can't parse ${name} JSON array`);
  return v as string[];
}

export type ChatRef = { id: number } | { username: string };

/** chat_id: an integer, or `@username`. */
export function chatRef(p: BotParams, name = 'chat_id'): ChatRef {
  const raw = p[name];
  if (raw === undefined || raw === null || raw === '') throw badRequest(`${name} is empty`);
  if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw)) throw badRequest('chat not found');
    return { id: raw };
  }
  const s = String(raw).trim();
  if (/^-?\d{1,16}$/.test(s)) return { id: Number(s) };
  if (/^@[A-Za-z0-9_]{1,64}$/.test(s)) return { username: s.slice(1) };
  throw badRequest('chat not found');
}
