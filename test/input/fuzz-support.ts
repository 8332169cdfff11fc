/**
 * The request fuzzer shared by the per-surface fuzz tests: fast-check
 * generators for hostile HTTP requests (random JSON types, duplicate and
 * `__proto__` keys, deep nesting, huge strings, NUL, lone surrogates,
 * invalid UTF-8 and percent-encoding, in JSON, form and query; random
 * headers), and a runner that fires them over keep-alive loopback
 * connections in parallel batches. Any 5xx, dropped connection or malformed
 * answer fails the property, and fast-check shrinks it to a small request.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import fc from 'fast-check';

export interface Shot {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** Requests per surface (issue 10 item 3), fired BATCH at a time. */
export const REQUESTS = 10_000;
export const BATCH = 16;

/** Strings that have broken parsers before, and numbers in text form. */
const NASTY = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff', '𝒳', '\u202e', '\r\n', '"', "'", '\\', '%', '%ZZ', '%E0%A4%A', '%00', '%C0%80',
  '<script>', '../', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'null', 'true', '[]', '{}',
  '-1', '0', '1e400', 'NaN', '99999999999999999999', '0x10', '1.5',
];
const HEADER_TEXT = fc.stringMatching(/^[\x21-\x7e]{0,40}$/);

/** A string of any kind: known names, noise, binary, NUL, lone surrogates, and now and then a huge one. */
export function text(known: string[] = []): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...NASTY, ...known) },
    { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 6_000 }).map((n) => 'x'.repeat(n)) },
  );
}

/** Any JSON value: every type, extreme numbers, nested a little. */
export function jsonValue(known: string[] = []): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    { weight: 4, arbitrary: text(known) },
    { weight: 2, arbitrary: fc.integer() },
    { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
    { weight: 2, arbitrary: fc.constantFrom(0, -0, 1e308, -1e308, 2 ** 53 + 1, 1.5, null, true, false) },
  );
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small', maxDepth: 3 }, leaf, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 8 }), tie('value'), { maxKeys: 3 })),
  }));
  return value;
}

/** Parameter names: the surface's own (most of the time), prototype keys, noise. */
function keys(names: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...names) },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'a[b]', 'a[]', '') },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  );
}

/** Percent-encodes `s` as UTF-8; a lone surrogate becomes U+FFFD, as a browser sends it. */
const pct = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return encodeURIComponent(s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
  }
};

/** Form or query text: repeated names, any value, and raw garbage appended after encoding. */
function urlencoded(names: string[], known: string[]): fc.Arbitrary<string> {
  const pair = fc.tuple(keys(names), text(known));
  const raw = fc.constantFrom('', '', '', '&%ZZ=1', '&x=%FF', '&=&&=', '&a=%E0%A4%A', '&b=%', '&c[]=x', '&%00=%00', '&d=%C0%80', '&e=\u00ff');
  return fc.tuple(fc.array(pair, { maxLength: 6 }), raw).map(([pairs, r]) => pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&') + r);
}

/** JSON text built by hand: duplicate keys and `__proto__` survive, and sometimes it is wrapped deep or cut short. */
function jsonText(names: string[], known: string[]): fc.Arbitrary<string> {
  const object = fc.array(fc.tuple(keys(names), jsonValue(known)), { maxLength: 6 })
    .map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`);
  return fc.oneof(
    { weight: 8, arbitrary: object },
    { weight: 1, arbitrary: jsonValue(known).map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.tuple(object, fc.constantFrom(20, 40, 5_000)).map(([o, n]) => `${'['.repeat(n)}${o}${']'.repeat(n)}`) },
    { weight: 1, arbitrary: fc.tuple(object, fc.constantFrom(20, 40, 5_000)).map(([o, n]) => `${'{"a":'.repeat(n)}${o}${'}'.repeat(n)}`) },
    { weight: 1, arbitrary: object.map((o) => o.slice(0, Math.max(1, o.length - 2))) },
  );
}

const CONTENT_TYPES = [
  'application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data', 'multipart/form-data; boundary=x',
  'application/json; charset=utf-16', 'application/x-www-form-urlencoded; charset=latin1', 'application/octet-stream', '*/*',
  'application/json, text/plain', 'application/jsonx', 'Application/JSON',
];

/** A body and its content type, matching most of the time. */
function body(names: string[], known: string[]): fc.Arbitrary<{ type?: string; body?: string | Uint8Array }> {
  return fc.oneof(
    { weight: 4, arbitrary: jsonText(names, known).map((b) => ({ type: 'application/json', body: b })) },
    { weight: 4, arbitrary: urlencoded(names, known).map((b) => ({ type: 'application/x-www-form-urlencoded', body: b })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...CONTENT_TYPES), fc.oneof(jsonText(names, known), urlencoded(names, known))).map(([type, b]) => ({ type, body: b })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...CONTENT_TYPES), fc.uint8Array({ maxLength: 64 })).map(([type, b]) => ({ type, body: b })) },
    { weight: 1, arbitrary: fc.constantFrom({}, { type: 'application/json', body: '' }, { type: 'application/x-www-form-urlencoded', body: '' }) },
  );
}

export interface SurfaceSpec {
  /** Paths, `{id}`-style placeholders already filled in. */
  paths: string[];
  methods?: string[];
  /** Parameter names the surface reads. */
  names: string[];
  /** Values that reach deeper (valid ids, grant types, tokens). */
  known: string[];
  /** Authorization header values; some valid, some not. */
  authorizations: string[];
  /** Whether a few requests use other verbs (PUT, DELETE, PATCH, OPTIONS, HEAD); default yes. */
  otherVerbs?: boolean;
  /** Extra headers sometimes sent (cookies). */
  cookies?: string[];
}

/** Random requests for one surface. */
export function shots(spec: SurfaceSpec): fc.Arbitrary<Shot> {
  const methods = spec.methods ?? ['GET', 'POST'];
  const others = fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD');
  const method = spec.otherVerbs === false ? fc.constantFrom(...methods) : fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...methods) }, { weight: 1, arbitrary: others });
  const path = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...spec.paths) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...spec.paths), fc.constantFrom('/%ZZ', '/%E0%A4%A', '/%00', '/..', '//', '/x'.repeat(300), '%2F', '/__proto__', '/constructor')).map(([p, s]) => p + s) },
  );
  const auth = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...spec.authorizations) },
    { weight: 1, arbitrary: HEADER_TEXT.map((t) => `Bearer ${t}`) },
    { weight: 1, arbitrary: HEADER_TEXT.map((t) => `Basic ${Buffer.from(t).toString('base64')}`) },
    { weight: 1, arbitrary: fc.constantFrom('Bearer', 'Bearer  ', 'Basic', 'Basic !!!', 'DPoP abc', 'bearer\tx', 'Basic Og==') },
  );
  const extra = fc.record({
    authorization: fc.option(auth, { nil: undefined, freq: 3 }),
    cookie: fc.option(fc.oneof(fc.constantFrom(...(spec.cookies ?? ['gh_session=x'])), HEADER_TEXT.map((t) => `gh_session=${t}; gh_csrf=${t}`)), { nil: undefined, freq: 2 }),
    'x-forwarded-for': fc.option(fc.oneof(fc.ipV4(), fc.ipV6(), HEADER_TEXT), { nil: undefined, freq: 4 }),
    accept: fc.option(fc.constantFrom('text/html', 'application/json', '*/*'), { nil: undefined, freq: 2 }),
  }, { requiredKeys: [] });
  return fc.tuple(method, path, urlencoded(spec.names, spec.known), body(spec.names, spec.known), extra).map(([m, p, q, b, h]) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(h)) if (v !== undefined) headers[k] = v;
    const hasBody = m !== 'GET' && m !== 'HEAD' && b.body !== undefined;
    if (hasBody && b.type !== undefined) headers['content-type'] = b.type;
    // Node answers a request line and headers over 16 KiB itself (431) before any route: keep URLs under that.
    return { method: m, path: q ? `${p}?${q.slice(0, 8_000)}` : p, headers, ...(hasBody ? { body: b.body } : {}) };
  });
}

/** Keep-alive connections, BATCH at once; node:http costs a fraction of fetch's CPU, so the fuzz is bound by the server. */
const agent = new http.Agent({ keepAlive: true, maxSockets: BATCH });

/** Sends one request; a refused or dropped connection rejects, which fails the property. */
export function send(base: string, shot: Shot): Promise<Answer> {
  const body = shot.body === undefined ? undefined : typeof shot.body === 'string' ? Buffer.from(shot.body) : shot.body;
  // As a browser would, bytes outside printable ASCII go percent-encoded on the request line.
  const path = shot.path.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, {
      method: shot.method, agent,
      headers: { ...shot.headers, ...(body ? { 'content-length': String(body.byteLength) } : {}) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) for (const x of [v].flat()) headers.append(k, x);
        resolve({ status: res.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Describes a failing request for the report (bodies cut). */
const show = (s: Shot) => JSON.stringify({ ...s, body: typeof s.body === 'string' ? s.body.slice(0, 300) : s.body && Buffer.from(s.body).toString('hex') }).slice(0, 1500);

/**
 * Fires REQUESTS requests at a surface, BATCH at once, checking each answer:
 * never a 5xx, and `check` for the surface's own shape. Returns how many were sent.
 */
export async function fuzz(base: string, arbitrary: fc.Arbitrary<Shot>, check: (a: Answer, s: Shot) => void, opts: { requests?: number; prepare?: (s: Shot) => Shot; shrink?: boolean; documented5xx?: (a: Answer, s: Shot) => boolean } = {}): Promise<number> {
  let sent = 0;
  const requests = opts.requests ?? REQUESTS;
  await fc.assert(fc.asyncProperty(fc.array(arbitrary, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
    await Promise.all(batch.map(async (raw) => {
      const shot = opts.prepare ? opts.prepare(raw) : raw;
      sent++;
      let answer: Answer;
      try {
        answer = await send(base, shot);
      } catch (e) {
        assert.fail(`connection failed (${String(e)}): ${show(shot)}`);
      }
      assert.ok(answer.status < 500 || opts.documented5xx?.(answer, shot), `status ${answer.status} ${answer.text.slice(0, 200)} for ${show(shot)}`);
      try {
        check(answer, shot);
      } catch (e) {
        assert.fail(`${(e as Error).message.slice(0, 400)} for ${show(shot)}`);
      }
    }));
  }), { numRuns: Math.ceil(requests / BATCH), endOnFailure: opts.shrink === false });
  return sent;
}

/** RFC 6749 §5.2 error codes use %x20-21 / %x23-5B / %x5D-7E. */
export const ERROR_CHARS = /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/;

export function jsonBody(a: Answer): Record<string, unknown> {
  assert.match(a.headers.get('content-type') ?? '', /^application\/json/, `content-type ${a.headers.get('content-type')}: ${a.text.slice(0, 100)}`);
  return JSON.parse(a.text) as Record<string, unknown>;
}

/** `{error, error_description?}` with a well-formed code (RFC 6749 §5.2, RFC 6750 §3, the admin and chat client APIs). */
export function expectErrorJson(a: Answer): void {
  const b = jsonBody(a);
  assert.equal(typeof b.error, 'string', a.text.slice(0, 200));
  assert.match(b.error as string, ERROR_CHARS);
  if (b.error_description !== undefined) assert.equal(typeof b.error_description, 'string');
}
