/**
 * Redirect URI rules (RFC 6749 §3.1.2, RFC 9700 §2.1, RFC 8252 §7.3, §8.3, §8.4).
 * Registered URIs are compared to requested ones as exact strings; the only
 * exception is the port of a loopback IP-literal URI of a native (public) app.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** RFC 8252 §8.3: `localhost` may resolve elsewhere, so only IP literals earn the port exception. */
const LOOPBACK_IP_LITERALS = new Set(['127.0.0.1', '[::1]']);

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

export const isLoopback = (u: URL) => u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname);
const hasUserinfo = (u: URL) => u.username !== '' || u.password !== '';
const isLoopbackLiteral = (u: URL) => u.protocol === 'http:' && LOOPBACK_IP_LITERALS.has(u.hostname);

/** Extracts the bound site's host from `example.com` or `https://example.com`. */
export function domainHost(domain: string): string | undefined {
  const withScheme = domain.includes('://') ? domain : `https://${domain}`;
  const u = parse(withScheme);
  return u && u.hostname ? u.hostname.toLowerCase() : undefined;
}

/** True when `host` is the bound site or a subdomain of it. */
export function hostUnderDomain(host: string, domain: string): boolean {
  const h = host.toLowerCase();
  return h === domain || h.endsWith(`.${domain}`);
}

/** Checks a URI at registration; returns a reason when it is not acceptable. */
export function redirectUriProblem(uri: string, domain: string | null): string | undefined {
  const u = parse(uri);
  if (!u) return `redirect URI is not an absolute URI: ${uri}`;
  // The parser drops these silently, but the URI is used as registered in redirects.
  if (/[\x00-\x20\x7f]/.test(uri)) return 'redirect URI must not contain spaces or control characters';
  if (uri.includes('#')) return 'redirect URI must not contain a fragment (RFC 6749 §3.1.2)';
  if (hasUserinfo(u)) return 'redirect URI must not contain credentials';
  const custom = u.protocol !== 'http:' && u.protocol !== 'https:';
  if (u.protocol === 'http:' && !isLoopback(u)) return 'redirect URI must use https (http only for loopback)';
  if (custom && !u.protocol.slice(0, -1).includes('.')) {
    // RFC 8252 §7.1: private-use schemes are reverse domain names.
    return 'custom-scheme redirect URI must be a reverse domain name (RFC 8252 §7.1)';
  }
  if (domain) {
    const host = domainHost(domain);
    if (!host) return `invalid bound domain: ${domain}`;
    if (custom || !hostUnderDomain(u.hostname, host)) return `redirect URI ${uri} is not under the bound domain ${host}`;
  }
  return undefined;
}

/**
 * Exact match (RFC 9700 §2.1), or, for a native client (`portMayVary`), a
 * loopback IP-literal URI that differs only in its port (RFC 8252 §7.3).
 * A URI with userinfo never matches, as it never registers.
 */
export function redirectUriMatches(registered: readonly string[], requested: string, portMayVary: boolean): boolean {
  const r = parse(requested);
  if (r && hasUserinfo(r)) return false;
  if (registered.includes(requested)) return true;
  // Compared as sent: the URL parser would drop whitespace and resolve `..`,
  // letting variants through and raw control characters into the redirect.
  if (!portMayVary || !r || !isLoopbackLiteral(r) || requested.includes('#') || r.href !== requested) return false;
  const withoutPort = (u: URL) => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.some((reg) => {
    const g = parse(reg);
    return !!g && isLoopbackLiteral(g) && !hasUserinfo(g) && withoutPort(g) === withoutPort(r);
  });
}

