/**
 * GET /admin/openapi.json: an OpenAPI 3.1 document of the admin API made
 * from the routes themselves. Every route registered in the admin context
 * (its children included) is seen by an onRoute hook with its zod schemas
 * (params, querystring, body, response), which zod's own JSON Schema
 * generator (z.toJSONSchema, draft 2020-12: OpenAPI 3.1's dialect) turns
 * into the document. A route added later is in it without anyone editing a
 * file; one without response schemas is documented with a JSON answer of any
 * shape until it gets them (admin-schemas.ts).
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { z } from 'zod';
import { ADMIN_ERROR } from './admin-schemas.js';

type JsonSchema = Record<string, unknown>;
interface RouteSchemas {
  params?: z.ZodType;
  querystring?: z.ZodType;
  body?: z.ZodType;
  response?: Record<string, z.ZodType>;
}
interface SeenRoute {
  method: string;
  url: string;
  schemas: RouteSchemas;
}

const isZod = (s: unknown): s is z.ZodType => s instanceof z.ZodType;

/** Schemas with a `.meta({ id })` go to components.schemas and are referred to from where they are used. */
function converter(components: Record<string, JsonSchema>) {
  return (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    // `unrepresentable: 'any'`: a transform's output has no JSON Schema; its input (what a caller sends) does.
    const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
    const text = JSON.stringify(json).replace(/"#\/\$defs\/([^"]+)"/g, (_, id: string) => JSON.stringify(`#/components/schemas/${id}`));
    const out = JSON.parse(text) as JsonSchema;
    for (const [id, def] of Object.entries((out.$defs ?? {}) as Record<string, JsonSchema>)) components[id] = def;
    delete out.$defs;
    delete out.$schema;
    return out;
  };
}

/** `/admin/clients/:id` → `/admin/clients/{id}` (OpenAPI 3.1 §4.8.8 path templating). */
const templated = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The fields of an object schema, as OpenAPI parameters `in` path or query. */
function parametersOf(schema: JsonSchema, where: 'path' | 'query'): JsonSchema[] {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({ name, in: where, required: where === 'path' || required.has(name), schema: s }));
}

const ERRORS: Record<string, string> = {
  400: 'invalid_request: a parameter is missing or malformed (RFC 6749 §5.2 JSON)',
  401: 'invalid_token: no or a wrong admin token (RFC 6750 §3 WWW-Authenticate, realm "gatehouse-admin")',
  404: 'not_found: no such object',
  429: 'too many failed attempts with the admin token (Retry-After)',
};

function operation(route: SeenRoute, convert: ReturnType<typeof converter>): JsonSchema {
  const { params, querystring, body, response } = route.schemas;
  const parameters = [
    ...(params ? parametersOf(convert(params, 'input'), 'path') : []),
    ...(querystring ? parametersOf(convert(querystring, 'input'), 'query') : []),
  ];
  const responses: Record<string, JsonSchema> = {};
  const declared = Object.entries(response ?? {});
  for (const [status, schema] of declared) {
    responses[status] = status === '204'
      ? { description: 'done; no content' }
      : { description: schema.description ?? 'success', content: { 'application/json': { schema: convert(schema, 'output') } } };
  }
  if (declared.length === 0) responses['200'] = { description: 'success (JSON)', content: { 'application/json': { schema: {} } } };
  const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  for (const [status, description] of Object.entries(ERRORS)) {
    if (status === '400' && !params && !querystring && !body) continue;
    if (status === '404' && !params) continue;
    responses[status] = { description, content: errorContent };
  }
  return {
    operationId: operationId(route),
    ...(parameters.length ? { parameters } : {}),
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: convert(body, 'input') } } } } : {}),
    responses,
  };
}

/** `POST /admin/clients/:id/secret` → `postClientsByIdSecret`: stable, unique, usable as a method name. */
function operationId(route: SeenRoute): string {
  const words = route.url.replace(/^\/admin\/?/, '').split('/').filter(Boolean)
    .map((w) => (w.startsWith(':') ? `By_${w.slice(1)}` : w))
    .flatMap((w) => w.split(/[^A-Za-z0-9]+/)).filter(Boolean);
  return [route.method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}

/** The document's info.version: the package's. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

export interface OpenApiInfo {
  version: string;
  /** {auth_url}: the server the document's paths are relative to. */
  serverUrl: string;
}

/**
 * Watches the routes registered in `app` from now on (call it first in the
 * admin context) and serves the document at `path` within it. The
 * document is built on the first request, when every route is known.
 */
export function serveOpenApi(app: FastifyInstance, path: string, info: OpenApiInfo): void {
  const routes: SeenRoute[] = [];
  app.addHook('onRoute', (r: RouteOptions) => {
    for (const method of [r.method].flat()) {
      // Fastify adds HEAD beside every GET itself: it is not an operation of its own.
      if (method === 'HEAD') continue;
      const s = (r.schema ?? {}) as Record<string, unknown>;
      const response = Object.fromEntries(Object.entries((s.response ?? {}) as Record<string, unknown>).filter(([, v]) => isZod(v))) as Record<string, z.ZodType>;
      routes.push({
        method, url: r.url,
        schemas: {
          ...(isZod(s.params) ? { params: s.params } : {}),
          ...(isZod(s.querystring) ? { querystring: s.querystring } : {}),
          ...(isZod(s.body) ? { body: s.body } : {}),
          ...(Object.keys(response).length ? { response } : {}),
        },
      });
    }
  });
  let doc: string | undefined;
  app.get(path, async (_req, reply) => {
    doc ??= JSON.stringify(openApiDocument(routes, info));
    return reply.type('application/json').send(doc);
  });
}

export function openApiDocument(routes: readonly SeenRoute[], info: OpenApiInfo): JsonSchema {
  const components: Record<string, JsonSchema> = {};
  const convert = converter(components);
  components.Error = convert(ADMIN_ERROR, 'output');
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of [...routes].sort((a, b) => a.url.localeCompare(b.url))) {
    (paths[templated(route.url)] ??= {})[route.method.toLowerCase()] = operation(route, convert);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse admin API',
      version: info.version,
      description: 'Clients, users, signing keys, notification endpoints and their delivery log. Every operation, this document included, '
        + 'needs `Authorization: Bearer <GATEHOUSE_ADMIN_TOKEN>`; the API is off while that setting is unset.',
    },
    servers: [{ url: info.serverUrl }],
    security: [{ adminToken: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: { adminToken: { type: 'http', scheme: 'bearer', description: 'GATEHOUSE_ADMIN_TOKEN' } },
    },
  };
}
