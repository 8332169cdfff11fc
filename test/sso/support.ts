import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as jose from 'jose';

/**
 * An application's back-channel logout endpoint (OpenID Connect
 * Back-Channel Logout 1.0 §2.5) on loopback: records the logout tokens it
 * receives. `status` sets what it answers.
 */
export interface LogoutReceiver {
  url(path: string): string;
  /** Tokens received, per path. */
  received: Map<string, string[]>;
  status: number;
  close(): Promise<void>;
}

export async function startLogoutReceiver(): Promise<LogoutReceiver> {
  const received = new Map<string, string[]>();
  const r = { status: 200 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const token = new URLSearchParams(body).get('logout_token');
      if (req.method === 'POST' && req.headers['content-type'] === 'application/x-www-form-urlencoded' && token) {
        received.set(path, [...(received.get(path) ?? []), token]);
      }
      res.writeHead(r.status, { 'cache-control': 'no-store' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(r, {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}

/**
 * Validates a logout token the way §2.6 tells a relying party to: signature
 * with the issuer's published keys, `typ`, `iss`, `aud`, `iat`, `jti`, the
 * `events` member, `sub` or `sid`, and no `nonce`. Returns its claims.
 */
export async function verifyLogoutToken(issuer: string, clientId: string, token: string): Promise<jose.JWTPayload> {
  const jwks = jose.createLocalJWKSet((await (await fetch(`${issuer}/.well-known/jwks.json`)).json()) as jose.JSONWebKeySet);
  const { payload, protectedHeader } = await jose.jwtVerify(token, jwks, { issuer, audience: clientId, algorithms: ['ES256'], typ: 'logout+jwt', requiredClaims: ['iat', 'jti', 'events'] });
  assert.equal(protectedHeader.typ, 'logout+jwt');
  assert.deepEqual((payload.events as Record<string, unknown>)['http://schemas.openid.net/event/backchannel-logout'], {});
  assert.ok(typeof payload.sub === 'string' || typeof payload.sid === 'string');
  assert.equal(payload.nonce, undefined);
  return payload;
}
