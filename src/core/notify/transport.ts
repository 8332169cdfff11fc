/** One HTTP POST a channel makes; implemented over node:http in src/infra/notify-http.ts. */
export interface HttpPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** How much of the answer to keep (default 2 KB: the delivery log's excerpt). */
  responseBytes?: number;
  signal?: AbortSignal;
}

export interface HttpAnswer {
  /** null when no response came (connection refused, timeout, refused address). */
  status: number | null;
  retryAfter: string | undefined;
  /** The start of the response body (the delivery log keeps it). */
  excerpt: string;
  error: string | null;
}

export interface Transport {
  post(req: HttpPost): Promise<HttpAnswer>;
  close(): void;
}
