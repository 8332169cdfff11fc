import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PARAMS, zodValidator } from '../../src/http/input.js';

/** What a route's validator answers for `data`: zod's value, or its error's description. */
function validate(data: unknown): { value?: unknown; error?: string } {
  const check = zodValidator({ schema: PARAMS, httpPart: 'body', method: 'POST', url: '/token' }) as (d: unknown) => { value?: unknown; error?: Error };
  const r = check(data);
  return r.error ? { error: r.error.message } : { value: r.value };
}

function zodSays(data: unknown): { value?: unknown; error?: string } {
  const r = PARAMS.safeParse(data);
  if (r.success) return { value: r.data };
  const check = zodValidator({ schema: PARAMS, httpPart: 'body', method: 'POST', url: '/token' }) as (d: unknown) => { error?: Error };
  return { error: check(data).error?.message };
}

const nullProto = (o: Record<string, unknown>) => Object.assign(Object.create(null) as object, o);

describe('PARAMS: the hand-written common case answers as zod does', () => {
  const cases: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['empty', {}],
    ['strings', { grant_type: 'client_credentials', scope: 'a b' }],
    ['null prototype (the form parser)', nullProto({ grant_type: 'x', resource: ['a', 'b'] })],
    ['repeated', { a: ['1', '2', ''] }],
    ['empty list', { a: [] }],
    ['number', { a: 1 }],
    ['nested object', { a: { b: 'c' } }],
    ['list with a number', { a: ['x', 2] }],
    ['sparse list', { a: Object.assign(new Array<string>(2), { 0: 'x' }) }],
    ['undefined value', { a: undefined }],
    ['own __proto__', JSON.parse('{"__proto__": "x", "a": "b"}') as unknown],
    ['key "constructor"', { constructor: 'x' }],
    ['string', 'a=b'],
    ['array', ['a']],
    ['number body', 3],
    ['a class instance', new (class { a = 'b'; })()],
    ['a Map', new Map([['a', 'b']])],
  ];
  for (const [name, data] of cases) {
    it(name, () => {
      const got = validate(data);
      assert.deepStrictEqual(got, zodSays(data));
    });
  }

  it('a fresh object and fresh lists, never the request\'s own', () => {
    const data = { a: ['1'], b: 'c' };
    const { value } = validate(data) as { value: Record<string, unknown> };
    assert.notEqual(value, data);
    assert.notEqual(value.a, data.a);
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
  });

  it('random forms', () => {
    const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
    const values = ['', 'x', '\u0000', 'é', 1, null, undefined, true, {}, [], ['a'], ['a', 1], [[]], { a: 'b' }];
    const keys = ['a', 'b', 'grant_type', '', '0', 'toString', 'constructor', 'hasOwnProperty'];
    for (let n = 0; n < 2000; n++) {
      const data: Record<string, unknown> = Math.random() < 0.5 ? {} : (Object.create(null) as Record<string, unknown>);
      for (let k = Math.floor(Math.random() * 4); k > 0; k--) data[pick(keys)] = pick(values);
      assert.deepStrictEqual(validate(data), zodSays(data), JSON.stringify(data));
    }
  });
});
