import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { thumbprintOfDer } from '../core/oauth/mtls.js';

/**
 * `x5t#S256` of the certificate the client presented in the TLS handshake of
 * this connection (RFC 8705 §3), or undefined on plain HTTP or without one.
 * The server must ask for certificates (`requestCert: true`); with
 * `rejectUnauthorized: false` a self-signed one gets through the handshake and
 * is then judged by its thumbprint alone.
 */
export function peerCertificateThumbprint(req: IncomingMessage): string | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (!socket.encrypted || typeof socket.getPeerCertificate !== 'function') return undefined;
  const cert = socket.getPeerCertificate();
  return cert && cert.raw && cert.raw.length > 0 ? thumbprintOfDer(cert.raw) : undefined;
}
