/**
 * memstack's error tree, as the Python library and client raise it (`memstack.errors`), rebuilt from the server's
 * error bodies (`{"error": {"type", "message", …}}`), so code catches the same branches in both languages:
 *
 *     MemstackError
 *     ├── ConfigError              a bad base URL
 *     ├── Unauthorized             no API key, or an unknown or revoked one (HTTP 401)
 *     ├── InputError               the request was unusable (HTTP 400, other 4xx; `fields`: each bad field)
 *     │   └── NotFound             unknown user, memory, session, context or agent (HTTP 404: `kind`, `key`)
 *     ├── LimitReached             the user's tier is full (HTTP 409: `tier`, `limit`, `upgrade_prompt`)
 *     ├── BudgetExceeded           the untrimmable layers exceed the budget (HTTP 400: `needed`, `budget`)
 *     ├── OverrideViolation        a definition tries to change an agent's core (HTTP 400)
 *     ├── RequestInFlight          a request with the same Idempotency-Key is still being answered (HTTP 409)
 *     ├── UserErased               the user was erased while the request ran (HTTP 409)
 *     ├── StoreError               the server's storage failed (other 5xx)
 *     │   ├── StoreUnavailable     the server cannot be reached, or its database is unavailable (503)
 *     │   ├── StoreBusy            another writer holds the database (503)
 *     │   └── SessionConflict      another process changed the session during this turn (409)
 *     │       └── LeaseLost        another process took the session over
 *     └── ProviderError            the chat model's endpoint failed (502: `status`, `body`)
 *         ├── ProviderTimeout      no answer in time (504, or the server did not answer within `timeout`)
 *         └── MalformedResponse    an answer that could not be read
 *
 * Every error keeps the HTTP `status` (0 when no answer came) and the server's `type` and parsed `body`.
 */

export interface ErrorDetails {
  /** The HTTP status of the answer; 0 when none came. */
  status?: number;
  /** The server's error type (`InputError`, `NotFound`, …); "" when the answer had none. */
  type?: string;
  /** The answer's parsed JSON body, or its text when it was not JSON. */
  body?: unknown;
}

export class MemstackError extends Error {
  readonly status: number;
  readonly type: string;
  readonly body: unknown;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = new.target.name;
    this.status = details.status ?? 0;
    this.type = details.type ?? "";
    this.body = details.body;
  }
}

export class ConfigError extends MemstackError {}
export class Unauthorized extends MemstackError {}

export interface FieldProblem {
  field: string;
  problem: string;
}

export class InputError extends MemstackError {
  /** Each field that failed the endpoint's schema (empty for other refusals). */
  get fields(): FieldProblem[] {
    const fields = errorOf(this.body)?.["fields"];
    return Array.isArray(fields) ? (fields as FieldProblem[]) : [];
  }
}

export class NotFound extends InputError {
  constructor(
    message: string,
    readonly kind: string,
    readonly key: string,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

export class LimitReached extends MemstackError {
  constructor(
    message: string,
    readonly tier: string,
    readonly limit: number,
    readonly upgrade_prompt: string,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

export class BudgetExceeded extends MemstackError {
  constructor(
    message: string,
    readonly needed: number,
    readonly budget: number,
    details: ErrorDetails = {},
  ) {
    super(message, details);
  }
}

export class OverrideViolation extends MemstackError {}
export class RequestInFlight extends MemstackError {}
export class UserErased extends MemstackError {}
export class StoreError extends MemstackError {}
export class StoreUnavailable extends StoreError {}
export class StoreBusy extends StoreError {}
export class SessionConflict extends StoreError {}
export class LeaseLost extends SessionConflict {}
export class ProviderError extends MemstackError {}
export class ProviderTimeout extends ProviderError {}
export class MalformedResponse extends ProviderError {}

type Plain = new (message: string, details?: ErrorDetails) => MemstackError;

/** Error types whose class takes the server's message as it is. */
const BY_TYPE: Record<string, Plain> = {
  Unauthorized,
  InputError,
  OverrideViolation,
  SessionConflict,
  LeaseLost,
  RequestInFlight,
  UserErased,
  StoreBusy,
  StoreUnavailable,
};

function errorOf(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const error = (body as Record<string, unknown>)["error"];
  return typeof error === "object" && error !== null ? (error as Record<string, unknown>) : undefined;
}

const int = (value: unknown): number => (typeof value === "number" && Number.isInteger(value) ? value : 0);

/**
 * The error for one error answer (`body`: its parsed JSON, if any; `text`: its text), by the same rules as the
 * Python client's (`memstack.client._http.error_from`).
 */
export function errorFrom(status: number, body: unknown, text = ""): MemstackError {
  const error = errorOf(body) ?? {};
  const type = String(error["type"] ?? "");
  const message = String(error["message"] || text || `HTTP ${status}`);
  const details: ErrorDetails = { status, type, body: body ?? text };
  if (status === 404) {
    return new NotFound(message, String(error["kind"] || "resource"), String(error["key"] ?? ""), details);
  }
  if (status === 409 && type === "LimitReached" && typeof error["limit"] === "number") {
    const prompt = String(error["upgrade_prompt"] ?? "");
    return new LimitReached(message, String(error["tier"] ?? ""), error["limit"], prompt, details);
  }
  if (type === "BudgetExceeded") {
    return new BudgetExceeded(message, int(error["needed"]), int(error["budget"]), details);
  }
  if (status === 502 || status === 504) {
    return new (status === 504 ? ProviderTimeout : ProviderError)(message, details);
  }
  const known = BY_TYPE[type];
  if (known !== undefined) return new known(message, details);
  if (status === 401) return new Unauthorized(message, details);
  if (status === 409) return new SessionConflict(message, details);
  if (status === 503) return new StoreUnavailable(message, details);
  if (status >= 400 && status < 500) return new InputError(message, details);
  return new StoreError(message, details);
}
