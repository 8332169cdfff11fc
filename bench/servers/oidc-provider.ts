import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { exitWithParent } from './lifecycle.js';

/**
 * The peer: node-oidc-provider configured as the bench configures Gatehouse.
 * In-memory adapter (a Map, below), one ES256 signing key, confidential
 * clients with client_secret_basic, client_credentials and introspection
 * enabled, refresh tokens rotated on every use. Access tokens go to one
 * resource server (RFC 8707 resource indicators, its way of choosing a token
 * format): JWT for the `*-jwt` clients, opaque for the others, as Gatehouse's
 * per-client `token_format`.
 *
 * Prints `{"url", "control", "clients"}`. The control listener (its own port,
 * so the measured listener carries no extra route) mints refresh tokens:
 * node-oidc-provider issues them only from an authorization code, which needs
 * its interactive login; a grant and its refresh tokens are made here directly
 * through the provider's models, as its code grant would make them.
 */
const RESOURCE = 'https://api.bench.example';
const ACCESS_TTL = 3600;

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
const secret = () => randomBytes(32).toString('base64url');
const clients = {
  ccJwt: { client_id: 'cc-jwt', client_secret: secret(), grant_types: ['client_credentials'] },
  ccOpaque: { client_id: 'cc-opaque', client_secret: secret(), grant_types: ['client_credentials'] },
  introspector: { client_id: 'introspector', client_secret: secret(), grant_types: ['client_credentials'] },
  refresher: { client_id: 'refresher-jwt', client_secret: secret(), grant_types: ['refresh_token', 'authorization_code'], redirect_uris: ['https://app.bench.example/cb'] },
};

/**
 * node-oidc-provider's own in-memory adapter is an LRU of 1,000 entries, which
 * the refresh scenario (a pool of grants and tokens, two writes per request)
 * outgrows: grants were evicted and refreshes failed. This one keeps every
 * entry in a Map for the run, as its adapter interface describes.
 */
interface Payload { grantId?: string; uid?: string; userCode?: string; consumed?: number; [k: string]: unknown }
const stores = new Map<string, Map<string, Payload>>();
const grants = new Map<string, string[]>();
class MapAdapter {
  private readonly m: Map<string, Payload>;
  constructor(private readonly model: string) {
    this.m = stores.get(model) ?? new Map();
    stores.set(model, this.m);
  }
  async upsert(id: string, payload: Payload): Promise<void> {
    this.m.set(id, payload);
    if (payload.grantId) grants.set(payload.grantId, [...(grants.get(payload.grantId) ?? []), `${this.model}:${id}`]);
  }
  async find(id: string) { return this.m.get(id); }
  async findByUid(uid: string) { for (const p of this.m.values()) if (p.uid === uid) return p; return undefined; }
  async findByUserCode(code: string) { for (const p of this.m.values()) if (p.userCode === code) return p; return undefined; }
  async consume(id: string) { const p = this.m.get(id); if (p) p.consumed = Math.floor(Date.now() / 1000); }
  async destroy(id: string) { this.m.delete(id); }
  async revokeByGrantId(grantId: string) {
    for (const key of grants.get(grantId) ?? []) {
      const i = key.indexOf(':');
      stores.get(key.slice(0, i))?.delete(key.slice(i + 1));
    }
    grants.delete(grantId);
  }
}

const server = createServer();
server.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const { port } = server.address() as AddressInfo;
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  adapter: MapAdapter,
  clients: Object.values(clients).map((c) => ({
    response_types: c.grant_types.includes('authorization_code') ? ['code'] : [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: 'ES256',
    scope: 'openid offline_access api',
    ...c,
  })),
  jwks: { keys: [{ ...key, alg: 'ES256', use: 'sig', kid: 'bench' }] },
  features: {
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => RESOURCE,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx: unknown, _resource: string, client: { clientId: string }) => ({
        scope: 'api',
        audience: RESOURCE,
        accessTokenTTL: ACCESS_TTL,
        accessTokenFormat: client.clientId.endsWith('-jwt') ? 'jwt' : 'opaque',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  scopes: ['openid', 'offline_access', 'api'],
  rotateRefreshToken: true,
  findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
  ttl: { ClientCredentials: ACCESS_TTL, AccessToken: ACCESS_TTL, RefreshToken: 30 * 24 * 3600, Grant: 30 * 24 * 3600 },
});
server.on('request', provider.callback());

type Model = new (fields: Record<string, unknown>) => { save(): Promise<string>; addOIDCScope(s: string): void; addResourceScope(r: string, s: string): void };
/** Refresh tokens as the code grant issues them: a grant with `offline_access` and the resource's scope. */
async function mintRefreshTokens(count: number): Promise<string[]> {
  const p = provider as unknown as { Grant: Model; RefreshToken: Model; Client: { find(id: string): Promise<unknown> } };
  const client = await p.Client.find(clients.refresher.client_id);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const accountId = `bench-user-${i % 16}`;
    const grant = new p.Grant({ accountId, clientId: clients.refresher.client_id });
    grant.addOIDCScope('offline_access');
    grant.addResourceScope(RESOURCE, 'api');
    const grantId = await grant.save();
    const rt = new p.RefreshToken({
      accountId, client, grantId, gty: 'authorization_code', scope: 'offline_access api', resource: RESOURCE,
      authTime: Math.floor(Date.now() / 1000), rotations: 0, expiresWithSession: false,
    });
    out.push(await rt.save());
  }
  return out;
}

const control = createServer((req, res) => {
  const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('count') ?? '0');
  mintRefreshTokens(Math.min(Math.max(n, 0), 10_000)).then(
    (tokens) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tokens })),
    (e: Error) => res.writeHead(500).end(e.stack),
  );
});
control.listen(0, '127.0.0.1', () => {
  const c = control.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: issuer, control: `http://127.0.0.1:${c.port}`, clients, version: (provider as unknown as { constructor: { name: string } }).constructor.name })}\n`);
});
exitWithParent();
