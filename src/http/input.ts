import { createRequire } from 'node:module';
import type { FastifyInstance, FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
import { z } from 'zod';
import { invalidRequest } from '../core/errors.js';

/** RFC 6749 §5.2: error_description is %x20-21 / %x23-5B / %x5D-7E; a parameter name from the request may be anything. */
const safeText = (s: string) => s.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?').slice(0, 200);
const SAFE_NAME = /^[\w.\-[\]]{1,64}$/;

function describe(error: z.ZodError, part: string | undefined): string {
  const issue = error.issues[0]!;
  const names = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : SAFE_NAME.test(String(p)) ? String(p) : '?'));
  const where = names.length ? names.join('.').replace(/\.\[/g, '[') : part === 'body' ? 'the body' : part === 'params' ? 'the path' : 'the query';
  return safeText(`${where}: ${issue.message}`);
}

/**
 * The HTTP edge's one input check. Every route declares the type of each of
 * its parameters as a zod schema in its Fastify route options (`schema:
 * {querystring, body, params}`); this compiler validates the request against
 * it before the handler runs and hands the handler the parsed value, so the
 * core only ever sees what it expects. A mismatch is `invalid_request` (400),
 * which each server answers in its own shape (src/http/errors.ts).
 */
export const zodValidator: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const fast = fastChecks.get(schema);
  return (data) => {
    const value = fast?.(data);
    if (value !== undefined) return { value };
    const r = schema.safeParse(data);
    return r.success ? { value: r.data } : { error: invalidRequest(describe(r.error, httpPart)) };
  };
};

/**
 * A schema's common case checked by hand: the value zod would give, or
 * undefined to let zod decide (and word the error). A zod parse of a form
 * costs a few microseconds of every token and introspection request.
 */
const fastChecks = new WeakMap<z.ZodType, (data: unknown) => unknown>();

/** A compilers factory as Fastify calls it: (shared schemas, ajv or serializer options) → a compiler. */
type Factory = (schemas: unknown, options: unknown) => unknown;
// Fastify's own packages, resolved from where fastify is installed.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
let ajvCompiler: Factory | undefined;
let jsonSerializer: Factory | undefined;

/**
 * Fastify options for an app whose routes are checked with zod (validateWithZod):
 * Fastify's JSON-schema compilers (ajv for input, fast-json-stringify for
 * response schemas) are built only if a route ever asks for one, instead of
 * at every start (they are about a tenth of the modules a start loads). A
 * buildValidator of our own marks the validator as custom, which
 * validateWithZod does anyway.
 */
export const zodSchemaController = {
  compilersFactory: {
    buildValidator: (schemas: unknown, options: unknown) => (ajvCompiler ??= (fromFastify('@fastify/ajv-compiler') as () => Factory)())(schemas, options),
    buildSerializer: (schemas: unknown, options: unknown) => (jsonSerializer ??= (fromFastify('@fastify/fast-json-stringify-compiler') as () => Factory)())(schemas, options),
  },
} as unknown as NonNullable<FastifyServerOptions['schemaController']>;

/** Declares zod as the schema language of this Fastify context (and its children). */
export function validateWithZod(app: FastifyInstance): void {
  app.setValidatorCompiler(zodValidator);
}

/**
 * One parameter of a form or query string: a string, or the list of values
 * when it is repeated. Repeats pass through, so the protocol core answers
 * them as it does today (RFC 6749 §3.1: "MUST NOT be included more than once").
 */
export const param = z.union([z.string(), z.array(z.string())], { error: 'must be a string' }).optional();

/**
 * An OAuth parameter map (RFC 6749 appendix B: every parameter is a string).
 * Which names a grant reads is the grant's own table (`Grant.parameters`),
 * so the endpoint only fixes that each value is text; unknown names stay
 * ignored (RFC 6749 §3.1). A missing body (`null` at validation) is empty.
 */
export const PARAMS = z.preprocess((v) => v ?? {}, z.record(z.string(), param, { error: 'parameters must be a form' }));

/**
 * PARAMS as zod parses a parser's output (test/input/params-fast.test.ts
 * compares them): a fresh plain object of the own enumerable keys, each a
 * string or a fresh list of strings. Anything else (`__proto__` too), zod.
 */
function plainParams(data: unknown): Record<string, string | string[]> | undefined {
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object') return undefined;
  const proto: unknown = Object.getPrototypeOf(data);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const from = data as Record<string, unknown>;
  const out: Record<string, string | string[]> = {};
  for (const key in from) {
    if (!Object.hasOwn(from, key) || key === '__proto__') return undefined;
    const v = from[key];
    if (typeof v === 'string') out[key] = v;
    else if (Array.isArray(v)) {
      const list = new Array<string>(v.length);
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (typeof x !== 'string') return undefined;
        list[i] = x;
      }
      out[key] = list;
    } else return undefined;
  }
  return out;
}
fastChecks.set(PARAMS, plainParams);

/** A fixed set of parameters; any other name is dropped. */
export const paramsOf = <K extends string>(...names: K[]) =>
  z.preprocess((v) => v ?? {}, z.object(Object.fromEntries(names.map((n) => [n, param])) as Record<K, typeof param>));

/**
 * A body schema applied only to form bodies: a route that reads parameters
 * from a form leaves other media types to its own "must be a form" answer,
 * and a bearer token's JSON body stays ignored (RFC 6750 §2.2).
 */
export const formBody = <S extends z.ZodType>(schema: S) => ({ content: { 'application/x-www-form-urlencoded': { schema } } });

/** Path parameters, as the router decoded them. */
export const pathParams = <K extends string>(...names: K[]) => z.object(Object.fromEntries(names.map((n) => [n, z.string()])) as Record<K, z.ZodString>);

/** A JSON object body whose fields `shape` declares; other fields are dropped. */
export const jsonObject = <S extends z.ZodRawShape>(shape: S) => z.object(shape, { error: 'the body must be a JSON object' });

/** JSON nesting deeper than this is refused before parsing: nothing we accept comes close. */
export const MAX_JSON_DEPTH = 32;

/** Whether `text` opens more than `max` arrays or objects at once; one pass, strings skipped. */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Replaces the context's `application/json` parser with Fastify's own
 * (prototype-poisoning checks kept) behind a nesting limit, so no JSON body
 * can drive a recursive walk (ours, a library's, JSON.parse's) into a stack
 * overflow. Too deep is a 400 like any malformed body.
 */
export function limitJsonDepth(app: FastifyInstance, max = MAX_JSON_DEPTH): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (jsonTooDeep(body as string, max)) done(invalidRequest(`JSON nested deeper than ${max} levels`), undefined);
    else parse(req, body as string, done);
  });
}
