import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the SMTP server received it, its MIME parts decoded. */
export interface ReceivedMail {
  mailFrom: string;
  rcptTo: string[];
  /** The login the client gave, when it gave one. */
  auth: { username: string; password: string } | undefined;
  headers: Map<string, string>;
  text: string;
  html: string;
  raw: string;
}

/** RFC 2045 §6.7 quoted-printable (soft line breaks and =XX octets). */
function quotedPrintable(body: string): string {
  const bytes: number[] = [];
  const unfolded = body.replace(/=\r?\n/g, '');
  for (let i = 0; i < unfolded.length; i++) {
    const c = unfolded[i]!;
    if (c === '=' && /^[0-9A-F]{2}$/i.test(unfolded.slice(i + 1, i + 3))) {
      bytes.push(parseInt(unfolded.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(c, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function splitHeaders(part: string): { headers: Map<string, string>; body: string } {
  const at = part.search(/\r?\n\r?\n/);
  const head = at < 0 ? part : part.slice(0, at);
  const body = at < 0 ? '' : part.slice(at).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  // RFC 5322 §2.2.3: a line starting with white space continues the header before it.
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decode(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  if (encoding === 'quoted-printable') return quotedPrintable(body);
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** The text/plain and text/html parts of a multipart/alternative message (what nodemailer sends for text + html). */
export function parseMail(raw: string): { headers: Map<string, string>; text: string; html: string } {
  const { headers, body } = splitHeaders(raw);
  const boundary = /boundary="?([^";]+)"?/.exec(headers.get('content-type') ?? '')?.[1];
  let text = '';
  let html = '';
  const parts = boundary ? body.split(`--${boundary}`).slice(1, -1) : [body];
  for (const p of parts) {
    const part = boundary ? splitHeaders(p.replace(/^\r?\n/, '')) : { headers, body };
    const type = (part.headers.get('content-type') ?? '').toLowerCase();
    const content = decode(part.headers, part.body).replace(/\r\n/g, '\n').replace(/\n$/, '');
    if (type.startsWith('text/plain')) text = content;
    if (type.startsWith('text/html')) html = content;
  }
  return { headers, text, html };
}

export type RcptAnswer = { code: number; message: string } | undefined;

/**
 * A real SMTP server (the `smtp-server` package) on a loopback port: it
 * accepts every message (optionally checking a login), keeps what it
 * received, and can refuse a recipient with a reply code. `stop()` closes
 * the port; `start()` opens the same port again.
 */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  /** How to answer RCPT TO (undefined: accept). */
  rcpt: (address: string) => RcptAnswer = () => undefined;
  port = 0;
  /** Connections open now, and the most that were open at once. */
  open = 0;
  maxOpen = 0;
  private server: SMTPServer | undefined;
  private waiters: (() => void)[] = [];

  constructor(private readonly login?: { username: string; password: string }) {}

  async start(): Promise<this> {
    const server = new SMTPServer({
      logger: false,
      // Plain SMTP on loopback: no certificate to trust in the test.
      disabledCommands: this.login ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
      allowInsecureAuth: true,
      authOptional: !this.login,
      onConnect: (_session, cb) => {
        this.open++;
        this.maxOpen = Math.max(this.maxOpen, this.open);
        cb();
      },
      onClose: () => {
        this.open--;
      },
      onAuth: (auth, _session, cb) => {
        if (this.login && auth.username === this.login.username && auth.password === this.login.password) cb(null, { user: auth.username });
        else cb(Object.assign(new Error('Authentication failed'), { responseCode: 535 }));
      },
      onRcptTo: (address, _session, cb) => {
        const answer = this.rcpt(address.address);
        if (answer) cb(Object.assign(new Error(answer.message), { responseCode: answer.code }));
        else cb();
      },
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const { headers, text, html } = parseMail(raw);
          const user = session.user as string | undefined;
          this.received.push({
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            rcptTo: session.envelope.rcptTo.map((r) => r.address),
            auth: user && this.login ? { username: user, password: this.login.password } : undefined,
            headers, text, html, raw,
          });
          for (const w of this.waiters.splice(0)) w();
          cb();
        });
      },
    });
    server.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves once `n` messages have arrived (or rejects after `ms`). */
  async waitFor(n: number, ms = 10_000): Promise<ReceivedMail[]> {
    const deadline = Date.now() + ms;
    while (this.received.length < n) {
      if (Date.now() > deadline) throw new Error(`expected ${n} messages, got ${this.received.length}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
    return this.received;
  }
}
