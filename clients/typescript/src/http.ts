/**
 * The transport: `fetch` to one memstack server, JSON in and out, the server's error bodies turned into the errors
 * of `errors.ts`, and safe retries, as the Python client does them (`memstack.client._http`).
 *
 * Retries are safe: every request other than a GET carries an `Idempotency-Key` generated for that call, and a
 * retry of the call sends the same key, so the server does the work once and answers the retry with the first
 * answer. A call is retried, up to `retries` times, when no answer came (the connection failed) and when the server
 * asks for it (503 with `Retry-After`); while the first attempt is still being answered (409 `RequestInFlight`) the
 * retry waits for it, as long as one request may take (`timeout`). A stream is retried only before its first event.
 * A call that gets no answer within `timeout` is not retried: the server may still be doing it.
 */
import { MalformedResponse, MemstackError, ProviderTimeout, StoreUnavailable, errorFrom } from "./errors.js";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** Seconds before the first retry after a failed connection (doubled each time); a server's Retry-After wins. */
const BACKOFF_S = 0.25;

export type Query = Record<string, string | number | boolean | readonly string[] | null | undefined>;

export interface RequestOptions {
  json?: unknown;
  query?: Query;
  signal?: AbortSignal;
}

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

function retryAfter(response: Response): number {
  const seconds = Number(response.headers.get("retry-after") ?? "1");
  return Number.isFinite(seconds) ? Math.min(30, Math.max(0, seconds)) : 1;
}

async function errorFor(response: Response): Promise<MemstackError> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return errorFrom(response.status, body, text);
}

function inFlight(response: Response, body: unknown): boolean {
  if (response.status !== 409 || typeof body !== "object" || body === null) return false;
  const error = (body as { error?: { type?: unknown } }).error;
  return error?.type === "RequestInFlight";
}

/** Query parameters without the missing ones; booleans as true/false; a list as repeated parameters. */
export function queryString(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value) params.append(key, item);
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

export class Transport {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly apiKey: string | undefined,
    readonly timeout: number,
    readonly retries: number,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  private headers(method: string, hasBody: boolean): Record<string, string> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.apiKey) headers["Authorization"] = `Bearer ${this.apiKey}`;
    if (hasBody) headers["Content-Type"] = "application/json";
    if (method !== "GET") headers[IDEMPOTENCY_HEADER] = crypto.randomUUID();
    return headers;
  }

  /** One attempt; `undefined` when no answer came (the connection failed), an error when none came in time. */
  private async attempt(
    method: string,
    url: string,
    init: RequestInit,
    signal: AbortSignal | undefined,
  ): Promise<Response | undefined> {
    const timer = AbortSignal.timeout(this.timeout * 1000);
    try {
      return await fetch(url, { ...init, method, signal: signal ? AbortSignal.any([signal, timer]) : timer });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (timer.aborted) {
        throw new ProviderTimeout(`the memstack server at ${this.baseUrl} did not answer in ${this.timeout} s`);
      }
      return undefined;
    }
  }

  /**
   * The answer to a call, after the retries it is allowed: an error answer is returned as it is, for the caller to
   * raise (a stream reads it before handing anything on).
   */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const hasBody = options.json !== undefined;
    const init: RequestInit = {
      headers: this.headers(method, hasBody),
      body: hasBody ? JSON.stringify(options.json) : undefined,
    };
    const url = this.baseUrl + path + queryString(options.query);
    let attempt = 0;
    let waitingSince: number | undefined; // when the server first said the call was still being answered
    for (;;) {
      const response = await this.attempt(method, url, init, options.signal);
      if (response === undefined) {
        if (attempt >= this.retries) {
          throw new StoreUnavailable(`cannot reach the memstack server at ${this.baseUrl} (${method} ${path})`);
        }
        await sleep(BACKOFF_S * 2 ** attempt++);
        continue;
      }
      if (response.status === 409) {
        const copy = response.clone();
        let body: unknown;
        try {
          body = await copy.json();
        } catch {
          body = undefined;
        }
        if (inFlight(response, body)) {
          waitingSince ??= Date.now();
          if (Date.now() - waitingSince <= this.timeout * 1000) {
            await sleep(retryAfter(response));
            continue;
          }
        }
      } else if (response.status === 503 && attempt < this.retries) {
        attempt++;
        await sleep(retryAfter(response));
        continue;
      }
      return response;
    }
  }

  /** The parsed JSON of a successful answer (`undefined` for 204); the error of a failed one. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    if (response.status >= 400) throw await errorFor(response);
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new MalformedResponse(`the memstack server answered ${method} ${path} with something that is not JSON`, {
        status: response.status,
        body: text.slice(0, 2000),
      });
    }
  }

  /** A streamed answer (server-sent events), its error raised before anything is handed on. */
  async stream(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const response = await this.send(method, path, options);
    if (response.status >= 400) throw await errorFor(response);
    if (response.body === null) {
      throw new MalformedResponse(`the memstack server answered ${method} ${path} without a body`, {
        status: response.status,
      });
    }
    return response;
  }
}

export interface ServerSentEvent {
  event: string;
  data: string;
}

/** The events of a `text/event-stream` body, one at a time; returning early cancels the body (closes the stream). */
export async function* events(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) yield { event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
        } else if (line.startsWith("event:")) {
          event = line.slice(6).trim();
        } else if (line.startsWith("data:")) {
          data.push(line.slice(5).replace(/^ /, ""));
        }
      }
      if (done) break;
    }
    if (data.length > 0) yield { event: event || "message", data: data.join("\n") };
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
