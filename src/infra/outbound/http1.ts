import net from 'node:net';
import tls from 'node:tls';
import type { LookupFunction } from 'node:net';

/** One request as the pool sends it: the URL already screened by the destination rule. */
export interface Http1Request {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | undefined;
  maxBytes: number;
}

export interface Http1Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
  truncated: boolean;
}

/** A connection-level failure, with node's error code (ECONNREFUSED, EADDRNOTAVAIL from the lookup hook, …). */
export type Http1Error = NodeJS.ErrnoException;

/** Response heads longer than this are refused (node:http's default limit). */
const MAX_HEAD = 16 * 1024;
/** An idle connection is closed after this long, before a server's keep-alive timeout (node's default: 5 s) can race a reuse. */
const IDLE_MS = 4000;
/** Header values node:http accepts (visible ASCII, tab, and bytes 0x80-0xff read as latin1): no CR or LF can split a request. */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Repeated, only the first counts (node:http's rule); set-cookie is a list; the rest are joined with ", ". */
const FIRST_ONLY = new Set(['content-type', 'content-length', 'user-agent', 'referer', 'host', 'authorization', 'proxy-authorization', 'if-modified-since',
  'if-unmodified-since', 'from', 'location', 'max-forwards', 'retry-after', 'etag', 'last-modified', 'server', 'age', 'expires']);

const hangUp = (): Http1Error => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

/** The request's bytes: the head and the body in one write (one system call, one TCP segment for a small webhook). */
function serialize(req: Http1Request): string | Buffer {
  const { url, body } = req;
  let head = `${req.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  let latin1 = false;
  for (const name in req.headers) {
    const value = req.headers[name]!;
    if (!TOKEN.test(name) || INVALID_VALUE.test(value)) throw Object.assign(new TypeError(`invalid header ${JSON.stringify(name)}`), { code: 'ERR_INVALID_CHAR' });
    const lower = name.toLowerCase();
    if (lower === 'host' || lower === 'content-length' || lower === 'connection' || lower === 'transfer-encoding') continue;
    if (!latin1 && /[\x80-\xff]/.test(value)) latin1 = true;
    head += `${name}: ${value}\r\n`;
  }
  if (body !== undefined) head += `content-length: ${Buffer.byteLength(body)}\r\n`;
  head += '\r\n';
  if (body === undefined) return Buffer.from(head, 'latin1');
  // Header bytes above 0x7f are latin1 (as node:http writes them), the body UTF-8: then two encodings, one buffer.
  return latin1 ? Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body, 'utf8')]) : head + body;
}

/**
 * Reads one response from the bytes of a connection: the head (1xx
 * interim answers skipped), then the body framed by content-length, by
 * chunked transfer coding, or by the end of the connection.
 */
class ResponseReader {
  private pending: Buffer | undefined;
  private state: 'head' | 'length' | 'chunk-size' | 'chunk' | 'chunk-end' | 'trailers' | 'close' | 'done' = 'head';
  private remaining = 0;
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  keepAlive = false;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  /** Bytes left over after the response: the server sent more than one answer, so the connection is not reused. */
  extra = false;

  constructor(private readonly maxBytes: number, private readonly noBody: boolean) {}

  get started(): boolean {
    return this.state !== 'head' || this.pending !== undefined;
  }

  get headRead(): boolean {
    return this.state !== 'head';
  }

  get done(): boolean {
    return this.state === 'done';
  }

  /** Framed by the end of the connection: it is complete when the connection ends. */
  get endsWithClose(): boolean {
    return this.state === 'close';
  }

  body(): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    return all.length > this.maxBytes ? all.subarray(0, this.maxBytes) : all;
  }

  /** Feeds bytes; true once the response is complete or truncated. Throws on a malformed response. */
  feed(data: Buffer): boolean {
    const buf = this.pending ? Buffer.concat([this.pending, data]) : data;
    this.pending = undefined;
    let at = 0;
    while (at < buf.length && this.state !== 'done') {
      switch (this.state) {
        case 'head': {
          const end = buf.indexOf('\r\n\r\n', at, 'latin1');
          if (end < 0) {
            if (buf.length - at > MAX_HEAD) throw Object.assign(new Error('response head too long'), { code: 'HPE_HEADER_OVERFLOW' });
            this.pending = buf.subarray(at);
            return false;
          }
          const interim = this.readHead(buf.toString('latin1', at, end));
          at = end + 4;
          if (!interim) this.startBody();
          break;
        }
        case 'length': {
          const n = Math.min(this.remaining, buf.length - at);
          if (this.take(buf.subarray(at, at + n))) return true;
          at += n;
          this.remaining -= n;
          if (this.remaining === 0) this.state = 'done';
          break;
        }
        case 'close':
          if (this.take(buf.subarray(at))) return true;
          at = buf.length;
          break;
        case 'chunk-size':
        case 'chunk-end':
        case 'trailers': {
          const eol = buf.indexOf('\r\n', at, 'latin1');
          if (eol < 0) {
            if (buf.length - at > MAX_HEAD) throw Object.assign(new Error('chunk line too long'), { code: 'HPE_INVALID_CHUNK_SIZE' });
            this.pending = buf.subarray(at);
            return false;
          }
          const line = buf.toString('latin1', at, eol);
          at = eol + 2;
          if (this.state === 'chunk-end') {
            if (line !== '') throw Object.assign(new Error('malformed chunk'), { code: 'HPE_INVALID_CHUNK_SIZE' });
            this.state = 'chunk-size';
          } else if (this.state === 'trailers') {
            if (line === '') this.state = 'done';
          } else {
            const hex = line.split(';', 1)[0]!.trim();
            if (!/^[0-9a-fA-F]{1,8}$/.test(hex)) throw Object.assign(new Error('malformed chunk size'), { code: 'HPE_INVALID_CHUNK_SIZE' });
            this.remaining = parseInt(hex, 16);
            this.state = this.remaining === 0 ? 'trailers' : 'chunk';
          }
          break;
        }
        case 'chunk': {
          const n = Math.min(this.remaining, buf.length - at);
          if (this.take(buf.subarray(at, at + n))) return true;
          at += n;
          this.remaining -= n;
          if (this.remaining === 0) this.state = 'chunk-end';
          break;
        }
      }
    }
    if (at < buf.length) this.extra = true;
    return this.state === 'done';
  }

  /** True for an interim (1xx) head, which another head follows. */
  private readHead(text: string): boolean {
    const lines = text.split('\r\n');
    const m = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0]!);
    if (!m) throw Object.assign(new Error('malformed status line'), { code: 'HPE_INVALID_CONSTANT' });
    const status = Number(m[2]);
    if (status >= 100 && status < 200 && status !== 101) return true;
    this.status = status;
    const headers: Record<string, string | string[] | undefined> = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0) throw Object.assign(new Error('malformed header'), { code: 'HPE_INVALID_HEADER_TOKEN' });
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      const had = headers[name];
      if (had === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
      else if (Array.isArray(had)) had.push(value);
      else if (!FIRST_ONLY.has(name)) headers[name] = `${had}, ${value}`;
    }
    this.headers = headers;
    const connection = String(headers.connection ?? '').toLowerCase();
    this.keepAlive = m[1] === '1' && !connection.split(',').some((t) => t.trim() === 'close');
    return false;
  }

  private startBody(): void {
    const te = String(this.headers['transfer-encoding'] ?? '').toLowerCase();
    const length = this.headers['content-length'];
    if (this.noBody || this.status === 204 || this.status === 304) {
      this.state = 'done';
    } else if (te.split(',').some((t) => t.trim() === 'chunked')) {
      this.state = 'chunk-size';
    } else if (typeof length === 'string' && /^\d+$/.test(length)) {
      this.remaining = Number(length);
      this.state = this.remaining === 0 ? 'done' : 'length';
    } else if (length !== undefined) {
      throw Object.assign(new Error('malformed content-length'), { code: 'HPE_UNEXPECTED_CONTENT_LENGTH' });
    } else {
      this.state = 'close';
      this.keepAlive = false;
    }
  }

  /** Keeps body bytes up to one past the cap; true once past it. */
  private take(b: Buffer): boolean {
    if (b.length === 0) return false;
    this.chunks.push(b);
    this.size += b.length;
    if (this.size > this.maxBytes) {
      this.truncated = true;
      this.keepAlive = false;
      return true;
    }
    return false;
  }
}

interface Exchange {
  req: Http1Request;
  reader: ResponseReader;
  resolve(r: Http1Response): void;
  reject(e: Http1Error): void;
}

/** A kept-alive connection to one origin, carrying one exchange at a time. */
class Connection {
  exchange: Exchange | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  closed = false;

  constructor(readonly socket: net.Socket, private readonly release: (c: Connection, reusable: boolean) => void) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', (e: Error) => this.onEnd(e));
    socket.on('close', () => this.onEnd(undefined));
  }

  send(x: Exchange): void {
    clearTimeout(this.idleTimer);
    this.socket.ref();
    this.exchange = x;
    try {
      this.socket.write(serialize(x.req));
    } catch (e) {
      this.exchange = undefined;
      this.socket.destroy();
      x.reject(e as Http1Error);
    }
  }

  /** Waiting for the next exchange: no hold on the event loop (as node's agent), closed after IDLE_MS. */
  idle(ms: number): void {
    this.socket.unref();
    this.idleTimer = setTimeout(() => this.socket.destroy(), ms);
    this.idleTimer.unref();
  }

  destroy(): void {
    clearTimeout(this.idleTimer);
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    const x = this.exchange;
    if (!x) {
      // Bytes nobody asked for: the connection's framing cannot be trusted any more.
      this.socket.destroy();
      return;
    }
    let complete: boolean;
    try {
      complete = x.reader.feed(d);
    } catch (e) {
      this.exchange = undefined;
      this.socket.destroy();
      x.reject(e as Http1Error);
      return;
    }
    if (!complete) return;
    this.exchange = undefined;
    // Reused only when the answer was read to its end and nothing else came; else its 'close' counts it out.
    if (x.reader.done && x.reader.keepAlive && !x.reader.extra && !this.closed) this.release(this, true);
    else this.socket.destroy();
    x.resolve(responseOf(x.reader));
  }

  private onEnd(err: Error | undefined): void {
    clearTimeout(this.idleTimer);
    const x = this.exchange;
    this.exchange = undefined;
    if (!this.closed) {
      this.closed = true;
      this.release(this, false);
    }
    if (!x) return;
    // Framed by the end of the connection, or cut short once the head was read: the answer is what came (as node:http's 'close').
    if (x.reader.headRead) x.resolve(responseOf(x.reader));
    else x.reject((err as Http1Error | undefined) ?? hangUp());
  }
}

function responseOf(r: ResponseReader): Http1Response {
  return { status: r.status, headers: r.headers, bytes: r.body(), truncated: r.truncated };
}

/** Connections to one origin: idle ones (the most recent first) and requests waiting for one. */
interface Origin {
  idle: Connection[];
  open: number;
  queue: (() => void)[];
}

/**
 * A minimal HTTP/1.1 client with keep-alive connections per origin, for the
 * outbound module (src/infra/outbound/client.ts). node:http's client cost
 * about 200 µs of CPU per request on the bench machine, four times what the
 * same exchange costs on a socket (docs/benchmarks.md, webhooks-max): the
 * worker spent more on it than on everything else a delivery takes. This
 * writes each request as one buffer and parses only what a webhook, a Bot
 * API call or a JWKS fetch answers: status line, headers, a body framed by
 * content-length, chunked coding or the connection's end. Connections go
 * through `lookup` (the destination rule's check of every resolved address)
 * like node:http's did.
 */
export class Http1Pool {
  private readonly origins = new Map<string, Origin>();
  /** Every open connection, idle or busy (close() drops them all). */
  private readonly all = new Set<Connection>();
  private closed = false;

  constructor(private readonly lookup: LookupFunction, private readonly maxSockets: number) {}

  /**
   * Sends `req`. `cancel(err)` ends the exchange with `err` (its connection
   * is destroyed): the caller's deadline and abort signal. The promise
   * rejects with the socket's error when no answer came.
   */
  request(req: Http1Request): { response: Promise<Http1Response>; cancel(err: Error): void } {
    const key = `${req.url.protocol}//${req.url.host}`;
    let o = this.origins.get(key);
    if (!o) this.origins.set(key, (o = { idle: [], open: 0, queue: [] }));
    const origin = o;
    let conn: Connection | undefined;
    let settled = false;
    let x!: Exchange;
    const response = new Promise<Http1Response>((resolve, reject) => {
      x = {
        req,
        reader: new ResponseReader(req.maxBytes, false),
        resolve: (r) => {
          if (settled) return;
          settled = true;
          resolve(r);
        },
        reject: (e) => {
          if (settled) return;
          settled = true;
          reject(e);
        },
      };
    });
    const start = () => {
      if (settled) return;
      conn = origin.idle.pop() ?? this.connect(req.url, origin);
      conn.send(x);
    };
    if (this.closed) x.reject(hangUp());
    else if (origin.idle.length === 0 && origin.open >= this.maxSockets) origin.queue.push(start);
    else start();
    return {
      response,
      cancel: (err) => {
        if (settled) return;
        const i = origin.queue.indexOf(start);
        if (i >= 0) origin.queue.splice(i, 1);
        if (conn && conn.exchange === x) {
          conn.exchange = undefined;
          conn.destroy();
        }
        x.reject(err);
      },
    };
  }

  private connect(url: URL, o: Origin): Connection {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const secure = url.protocol === 'https:';
    const port = Number(url.port) || (secure ? 443 : 80);
    const socket = secure
      ? tls.connect({ host, port, lookup: this.lookup, ALPNProtocols: ['http/1.1'], ...(net.isIP(host) ? {} : { servername: host }) })
      : net.connect({ host, port, lookup: this.lookup });
    o.open++;
    const conn = new Connection(socket, (c, reusable) => {
      if (reusable) {
        c.idle(IDLE_MS);
        o.idle.push(c);
      } else {
        // Closed: counted out once, here.
        this.all.delete(c);
        const i = o.idle.indexOf(c);
        if (i >= 0) o.idle.splice(i, 1);
        o.open--;
      }
      o.queue.shift()?.();
    });
    this.all.add(conn);
    return conn;
  }

  /** Drops every connection, idle or busy. */
  close(): void {
    this.closed = true;
    for (const c of this.all) c.destroy();
    this.origins.clear();
  }
}
