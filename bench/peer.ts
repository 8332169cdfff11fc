import { fileURLToPath } from 'node:url';
import { basicAuth, call, type ClientCreds } from './gatehouse.js';
import { startChild, type Child } from './procs.js';

/** node-oidc-provider in a child process (bench/servers/oidc-provider.ts) and its fixtures. */
export interface PeerUnderTest {
  url: string;
  child: Child;
  version: string;
  ccJwt: ClientCreds;
  ccOpaque: ClientCreds;
  introspector: ClientCreds;
  refresher: ClientCreds;
  /** Refresh tokens made as its code grant makes them (through its own models). */
  mintRefreshTokens(count: number): Promise<string[]>;
  /** A fresh opaque client_credentials token to introspect (its store is an LRU of 1,000 entries). */
  opaqueToken(): Promise<string>;
}

interface Ready {
  url: string;
  control: string;
  clients: Record<'ccJwt' | 'ccOpaque' | 'introspector' | 'refresher', { client_id: string; client_secret: string }>;
}

export async function startPeer(nodeFlags: string[] = []): Promise<PeerUnderTest> {
  const script = fileURLToPath(new URL('./servers/oidc-provider.ts', import.meta.url));
  const { child, value } = await startChild<Ready>('oidc-provider', [...nodeFlags, '--import', 'tsx', script], (line) => {
    try {
      const j = JSON.parse(line) as Ready;
      return j.url && j.control ? j : undefined;
    } catch {
      return undefined;
    }
  });
  const creds = (c: { client_id: string; client_secret: string }): ClientCreds => ({ id: c.client_id, secret: c.client_secret, basic: basicAuth(c.client_id, c.client_secret) });
  const { createRequire } = await import('node:module');
  const version = (createRequire(import.meta.url)('oidc-provider/package.json') as { version: string }).version;
  const peer: PeerUnderTest = {
    url: value.url,
    child,
    version,
    ccJwt: creds(value.clients.ccJwt),
    ccOpaque: creds(value.clients.ccOpaque),
    introspector: creds(value.clients.introspector),
    refresher: creds(value.clients.refresher),
    mintRefreshTokens: async (count) => (await call(`${value.control}/?count=${count}`, {})).tokens as string[],
    opaqueToken: async () => (await call(`${value.url}/token`, {
      method: 'POST',
      headers: { authorization: peer.ccOpaque.basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    })).access_token as string,
  };
  return peer;
}
