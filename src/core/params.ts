import { invalidRequest } from './errors.js';

/** Request parameters as the HTTP edge parsed them; a repeated name is an array. */
export type Params = Record<string, string | string[] | undefined>;

/** RFC 6749 §3.1, §3.2: "Request and response parameters MUST NOT be included more than once." */
export function single(params: Params, name: string): string | undefined {
  const v = params[name];
  if (Array.isArray(v)) throw invalidRequest(`parameter ${name} is repeated`);
  return v === '' ? undefined : v;
}

export function required(params: Params, name: string): string {
  const v = single(params, name);
  if (v === undefined) throw invalidRequest(`missing parameter: ${name}`);
  return v;
}
