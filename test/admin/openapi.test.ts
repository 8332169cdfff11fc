/**
 * GET /admin/openapi.json (issue 30 item 4): behind the admin token like the
 * rest of /admin; a valid OpenAPI 3.1 document (a validator of the
 * specification's own JSON Schemas); every admin route in it, found in the
 * route files independently of the generator; real answers match the
 * documented response schemas; and a TypeScript client generated from it
 * (openapi-typescript + openapi-fetch) type-checks and calls the server.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import openapiTS, { astToString } from 'openapi-typescript';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ADMIN = 'admin-openapi-credential-0123456789abcdef';
const ROOT = join(import.meta.dirname, '../..');
type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };

/**
 * The admin routes as the source declares them: admin-routes.ts and the
 * route files it registers (`./x-routes.js` imports), read as text, so this
 * list does not come from the generator it checks.
 */
function declaredAdminRoutes(): string[] {
  const main = readFileSync(join(ROOT, 'src/http/auth/admin-routes.ts'), 'utf8');
  const files = ['admin-routes.ts', ...[...main.matchAll(/from '\.\/([\w-]+-routes)\.js'/g)].map((m) => `${m[1]}.ts`)];
  const routes = new Set<string>(['get /admin/openapi.json']);
  for (const f of files) {
    const text = readFileSync(join(ROOT, 'src/http/auth', f), 'utf8');
    for (const m of text.matchAll(/\b(?:app|child)\.(get|post|put|patch|delete)(?:<[^>]*>)?\(\s*'([^']+)'/g)) {
      routes.add(`${m[1]} /admin${m[2]!.replace(/:(\w+)/g, '{$1}')}`);
    }
  }
  return [...routes].sort();
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`GET /admin/openapi.json (${kind})`, { skip }, () => {
    let server: TestServer;
    let doc: Doc;
    const admin = (path: string, init: RequestInit = {}) => fetch(`${server.url}/admin${path}`, {
      ...init, headers: { authorization: `Bearer ${ADMIN}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    });
    before(async () => {
      server = await startServer({ db: kind, env: { GATEHOUSE_ADMIN_TOKEN: ADMIN, GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    });
    after(() => server.close());

    it('needs the admin token, like every /admin route', async () => {
      const none = await fetch(`${server.url}/admin/openapi.json`);
      assert.equal(none.status, 401);
      assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer realm="gatehouse-admin"/);
      const wrong = await fetch(`${server.url}/admin/openapi.json`, { headers: { authorization: 'Bearer nope' } });
      assert.equal(wrong.status, 401);
      const res = await admin('/openapi.json');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      doc = (await res.json()) as Doc;
    });

    it('is a valid OpenAPI 3.1 document holding every admin route, with the bearer scheme', async () => {
      const validator = new Validator();
      const result = await validator.validate(doc);
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
      assert.equal(validator.version, '3.1');
      const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`)).sort();
      assert.deepEqual(documented, declaredAdminRoutes());
      const raw = doc as unknown as { security: unknown; components: { securitySchemes: Record<string, unknown> } };
      assert.deepEqual(raw.security, [{ adminToken: [] }]);
      assert.deepEqual(raw.components.securitySchemes.adminToken, { type: 'http', scheme: 'bearer', description: 'GATEHOUSE_ADMIN_TOKEN' });
    });

    it('real answers match the documented response schemas', async () => {
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      ajv.addSchema(doc, 'openapi.json');
      const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
      const check = async (method: string, path: string, template: string, status: number, body?: unknown) => {
        const res = await admin(path, { method, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
        assert.equal(res.status, status, `${method} ${path}: ${await res.clone().text()}`);
        const json: unknown = status === 204 ? null : await res.json();
        const op = doc.paths[`/admin${template}`]![method.toLowerCase()]!;
        const declared = op.responses[String(status)];
        assert.ok(declared, `${method} ${template} documents ${status}`);
        if (status === 204) return json;
        const validate = ajv.compile({ $ref: `openapi.json#/paths/${pointer(`/admin${template}`)}/${method.toLowerCase()}/responses/${status}/content/${pointer('application/json')}/schema` });
        assert.ok(validate(json), `${method} ${template} ${status}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(json)}`);
        return json;
      };
      const client = await check('POST', '/clients', '/clients', 201, { client_name: 'Doc', grant_types: ['client_credentials'], scope: 'read' }) as { client_id: string };
      await check('GET', '/clients', '/clients', 200);
      await check('GET', `/clients/${client.client_id}`, '/clients/{id}', 200);
      await check('POST', `/clients/${client.client_id}/secret`, '/clients/{id}/secret', 200, {});
      await check('DELETE', `/clients/${client.client_id}`, '/clients/{id}', 204);
      const missing = await admin(`/clients/${client.client_id}`);
      assert.equal(missing.status, 404);
      const error = ajv.compile({ $ref: 'openapi.json#/components/schemas/Error' });
      assert.ok(error(await missing.json()), 'errors have the documented shape');
      await check('POST', '/users', '/users', 201, { username: 'docuser', email: 'doc@example.test', password: 'a long enough password' });
      await check('POST', '/keys/rotate', '/keys/rotate', 200, {});
      const hook = await check('POST', '/webhooks', '/webhooks', 201, { url: 'http://127.0.0.1:9/hook', events: ['*'] }) as { id: string };
      await check('GET', '/webhooks', '/webhooks', 200);
      await check('GET', `/webhooks/${hook.id}`, '/webhooks/{id}', 200);
      await check('POST', `/webhooks/${hook.id}/disable`, '/webhooks/{id}/disable', 200, {});
      await check('POST', `/webhooks/${hook.id}/enable`, '/webhooks/{id}/enable', 200, {});
      await check('POST', `/webhooks/${hook.id}/secret`, '/webhooks/{id}/secret', 200, {});
      await check('GET', `/webhooks/${hook.id}/messages`, '/webhooks/{id}/messages', 200);
      await check('POST', `/webhooks/${hook.id}/replay`, '/webhooks/{id}/replay', 200, { since: new Date(Date.now() - 3_600_000).toISOString() });
      const events = await check('GET', '/events', '/events', 200) as { events: { id: string }[] };
      assert.ok(events.events.length > 0, 'the changes above recorded events');
      await check('DELETE', `/webhooks/${hook.id}`, '/webhooks/{id}', 204);
    });

    it('a TypeScript client generated from it (openapi-typescript, openapi-fetch) type-checks and calls the API', { skip: kind !== 'sqlite' && 'the generated client does not depend on the database' }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gh-openapi-client-'));
      try {
        symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
        writeFileSync(join(dir, 'admin-api.d.ts'), astToString(await openapiTS(doc as never)));
        // As docs/operations.md shows it: typed paths, bodies and answers.
        writeFileSync(join(dir, 'client.ts'), [
          "import createClient from 'openapi-fetch';",
          "import type { paths } from './admin-api.js';",
          'export async function listClientIds(baseUrl: string, token: string): Promise<string[]> {',
          '  const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });',
          "  const made = await api.POST('/admin/clients', { body: { client_name: 'Generated', grant_types: ['client_credentials'] } });",
          "  if (!made.data) throw new Error('create failed');",
          "  const { data, error } = await api.GET('/admin/clients');",
          '  if (error) throw new Error(error.error);',
          '  // @ts-expect-error: the generated types know the routes (a typo does not compile)',
          "  void api.GET('/admin/clientz');",
          '  return data.clients.map((c) => c.client_id);',
          '}',
          '',
        ].join('\n'));
        const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
        const run = promisify(execFile);
        await run(process.execPath, [tsc, '--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
          join(dir, 'client.ts')], { cwd: dir }).catch((e: { stdout?: string }) => assert.fail(`the generated client does not type-check:\n${e.stdout}`));
        const { listClientIds } = (await import(join(dir, 'client.ts'))) as { listClientIds: (u: string, t: string) => Promise<string[]> };
        const ids = await listClientIds(server.url, ADMIN);
        assert.ok(ids.length >= 1);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
