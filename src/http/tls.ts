import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { ConfigError, type Config } from '../config.js';
import { addressMatcher } from '../core/oauth/addresses.js';
import { thumbprintFromHeader } from '../core/oauth/mtls.js';
import { peerCertificateThumbprint } from '../middleware/tls.js';

/**
 * HTTPS for the authorization and resource servers when GATEHOUSE_TLS_CERT
 * and GATEHOUSE_TLS_KEY are set. Client certificates are asked for but not
 * required, and not checked against any CA (`rejectUnauthorized: false`):
 * self-signed ones must get through the handshake, and a client is then
 * judged by the thumbprint it registered (RFC 8705 §2.2).
 *
 * Typed as a plain object: spread into Fastify's options it keeps the HTTP
 * server's types, which is all the rest of the code relies on.
 */
export function httpsOptions(config: Config): object {
  if (!config.tlsCert || !config.tlsKey) return {};
  const read = (path: string, name: string) => {
    try {
      return readFileSync(path);
    } catch (e) {
      throw new ConfigError(`${name}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  return {
    https: {
      cert: read(config.tlsCert, 'GATEHOUSE_TLS_CERT'),
      key: read(config.tlsKey, 'GATEHOUSE_TLS_KEY'),
      requestCert: true,
      rejectUnauthorized: false,
    },
  };
}

/** proxy-addr's names for address ranges, as GATEHOUSE_TRUST_PROXY (fastify `trustProxy`) accepts them. */
const NAMED: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** Whether the peer of a connection is a proxy we trust, read the way fastify reads `trustProxy`. */
export function trustedPeer(trustProxy: boolean | string): (address: string | undefined) => boolean {
  if (trustProxy === true) return () => true;
  if (trustProxy === false || trustProxy === '') return () => false;
  // A hop count trusts the nearest hops, the direct peer included.
  if (/^\d+$/.test(trustProxy.trim())) return () => Number(trustProxy) > 0;
  const entries = trustProxy.split(',').map((s) => s.trim()).filter(Boolean).flatMap((s) => (Object.hasOwn(NAMED, s) ? NAMED[s]! : [s]));
  return addressMatcher(entries);
}

/**
 * How this server learns the client certificate of a request: from its own
 * TLS handshake, or, when a trusted proxy terminated TLS, from the header
 * that proxy forwards it in (GATEHOUSE_CLIENT_CERT_HEADER). A request from
 * a trusted proxy without the header has no client certificate: the proxy's
 * own certificate on that connection is not the client's.
 */
export function clientCertificateReader(config: Config): (req: IncomingMessage) => string | undefined {
  const header = config.clientCertHeader;
  if (!header) return peerCertificateThumbprint;
  const trusted = trustedPeer(config.trustProxy);
  return (req) => {
    if (!trusted(req.socket.remoteAddress)) return peerCertificateThumbprint(req);
    const value = req.headers[header];
    return typeof value === 'string' ? thumbprintFromHeader(value) : undefined;
  };
}
