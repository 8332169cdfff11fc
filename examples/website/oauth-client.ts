import { createHash, randomBytes } from 'node:crypto';

/** The endpoints the site uses, from the authorization server's metadata (RFC 8414). */
export interface ServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
}

export interface Tokens {
  accessToken: string;
  /** Kept on the site's server, never sent to the browser (spec §4 rule 1.6, §5.8). */
  refreshToken: string | undefined;
  /** Unix milliseconds. */
  expiresAt: number;
  scope: string;
}

export class TokenError extends Error {
  constructor(readonly error: string, description: string | undefined) {
    super(description ? `${error}: ${description}` : error);
  }
}

export const randomString = () => randomBytes(32).toString('base64url');
/** RFC 7636 §4.2: S256 challenge of a high-entropy verifier. */
export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export async function discover(issuer: string): Promise<ServerMetadata> {
  const res = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
  if (!res.ok) throw new Error(`metadata of ${issuer}: HTTP ${res.status}`);
  const meta = (await res.json()) as ServerMetadata;
  // RFC 8414 §3.3: the metadata must name the issuer we asked.
  if (meta.issuer !== issuer) throw new Error(`metadata names issuer ${meta.issuer}, expected ${issuer}`);
  return meta;
}

/** The site's side of the token endpoint, authenticating with HTTP Basic (RFC 6749 §2.3.1). */
export class ConfidentialClient {
  constructor(
    private readonly meta: ServerMetadata,
    private readonly creds: { clientId: string; clientSecret: string },
    private readonly now: () => number,
  ) {}

  private get basic(): string {
    const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
    return `Basic ${Buffer.from(`${enc(this.creds.clientId)}:${enc(this.creds.clientSecret)}`).toString('base64')}`;
  }

  private async post(url: string, fields: Record<string, string>): Promise<Response> {
    return fetch(url, {
      method: 'POST',
      headers: { authorization: this.basic, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(fields),
    });
  }

  private async tokens(fields: Record<string, string>, previousRefresh?: string): Promise<Tokens> {
    const res = await this.post(this.meta.token_endpoint, fields);
    const body = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) throw new TokenError(String(body.error ?? 'server_error'), body.error_description as string | undefined);
    return {
      accessToken: String(body.access_token),
      // Rotation (RFC 9700 §4.14.2): use the new refresh token when one comes back.
      refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : previousRefresh,
      expiresAt: this.now() + Number(body.expires_in ?? 3600) * 1000,
      scope: String(body.scope ?? ''),
    };
  }

  /** RFC 6749 §4.1.3 with the PKCE verifier (RFC 7636 §4.5). */
  exchangeCode(code: string, redirectUri: string, verifier: string): Promise<Tokens> {
    return this.tokens({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });
  }

  /** RFC 6749 §6. */
  refresh(refreshToken: string): Promise<Tokens> {
    return this.tokens({ grant_type: 'refresh_token', refresh_token: refreshToken }, refreshToken);
  }

  /** RFC 7009: revoking the refresh token ends the whole grant. */
  async revoke(token: string): Promise<void> {
    if (this.meta.revocation_endpoint) await this.post(this.meta.revocation_endpoint, { token, token_type_hint: 'refresh_token' });
  }
}
