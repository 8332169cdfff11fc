import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

/** What one scenario sends: a fixed request, or `requests` with per-request setup (refresh rotation). */
export interface Load {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A Buffer for binary bodies (multipart uploads). */
  body?: string | Buffer;
  requests?: autocannon.Request[];
  /** Instead of the run's `--connections` (the login scenario queues on argon2 with fewer). */
  connections?: number;
  /** The status that means success when it is not 2xx (the login form answers 303); others count as non-2xx. */
  okStatus?: number;
}

export interface LoadOptions {
  connections: number;
  /** Seconds measured. */
  duration: number;
  /** Seconds run first and thrown away (JIT, connection set-up, caches). */
  warmup: number;
}

export interface Figures {
  /** Mean of the per-second request counts, every status included. */
  rps: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  /**
   * CPU the server process used (all its threads), per request and as a share
   * of one core over the measured run. Less sensitive than req/s to other
   * load on the machine; undefined where /proc is missing.
   */
  cpuPerRequestUs: number | undefined;
  serverCpuShare: number | undefined;
}

/** Linux's USER_HZ: /proc/PID/stat counts CPU time in 1/100 s. */
const CLOCK_TICKS_PER_SECOND = 100;

/** Starts counting `pid`'s CPU time; the returned function gives the microseconds used since. */
export function cpuMeter(pid: number | undefined): () => number | undefined {
  const before = cpuTimeUs(pid);
  return () => {
    const after = cpuTimeUs(pid);
    return before === undefined || after === undefined ? undefined : after - before;
  };
}

/**
 * utime + stime of `pid` and its live children (the workers of
 * GATEHOUSE_WORKERS) in microseconds, from /proc (fields 14 and 15).
 */
function cpuTimeUs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the fields after it are space-separated.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    let us = ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) us += cpuTimeUs(Number(child)) ?? 0;
    return us;
  } catch {
    return undefined;
  }
}

function fire(load: Load, connections: number, duration: number): Promise<autocannon.Result> {
  return autocannon({
    url: load.url,
    method: load.method ?? 'GET',
    ...(load.headers ? { headers: load.headers } : {}),
    ...(load.body !== undefined ? { body: load.body } : {}),
    ...(load.requests ? { requests: load.requests } : {}),
    connections,
    // One request in flight per connection: what real HTTP/1.1 clients do.
    pipelining: 1,
    duration,
    timeout: 10,
  });
}

/** Responses with another status than `ok`. */
function notOk(r: autocannon.Result, ok: number): number {
  const stats = (r as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  return Object.entries(stats).reduce((n, [code, s]) => (Number(code) === ok ? n : n + s.count), 0);
}

/** Warm-up, then the measured run, over loopback; `serverPid` is the process under test. */
export async function measure(load: Load, opts: LoadOptions, serverPid?: number): Promise<Figures> {
  const connections = load.connections ?? opts.connections;
  if (opts.warmup > 0) await fire(load, connections, opts.warmup);
  const cpu = cpuMeter(serverPid);
  const r = await fire(load, connections, opts.duration);
  const cpuUs = cpu();
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    non2xx: load.okStatus === undefined ? r.non2xx : notOk(r, load.okStatus),
    errors: r.errors,
    cpuPerRequestUs: cpuUs === undefined || r.requests.total === 0 ? undefined : cpuUs / r.requests.total,
    serverCpuShare: cpuUs === undefined ? undefined : cpuUs / (r.duration * 1e6),
  };
}
