/**
 * The client's namespaces `sessions`, `agents`, `contexts` and `users`: the Python client's namespaces of the same
 * names (`memstack.client._namespaces`), answered by the HTTP API.
 */
import type { Transport } from "./http.js";
import type {
  AgentRecord,
  CallOptions,
  ArchivedTurn,
  Manifest,
  SessionState,
  SessionSummary,
  UserSummary,
  WebhookDelivery,
  WebhookEndpoint,
} from "./types.js";

/** One path segment: ids are sent percent-escaped. */
export const seg = (value: string): string => encodeURIComponent(value);

/** A user's sessions (`GET /v1/users/{id}/sessions`, `GET /v1/sessions/{id}`, `GET /v1/sessions/{id}/turns`). */
export class Sessions {
  constructor(private readonly http: Transport) {}

  /** The user's sessions, most recently active first. */
  async list(
    user_id: string,
    options: CallOptions & { limit?: number; offset?: number } = {},
  ): Promise<SessionSummary[]> {
    const { signal, limit = 50, offset = 0 } = options;
    const path = `/v1/users/${seg(user_id)}/sessions`;
    const query = { limit, offset };
    const data = await this.http.request<{ sessions: SessionSummary[] }>("GET", path, { query, signal });
    return data.sessions;
  }

  /** One session's memory: base truth, turn log, the raw messages of its last turns. */
  async get(user_id: string, session_id: string, options: CallOptions = {}): Promise<SessionState> {
    const path = `/v1/sessions/${seg(session_id)}`;
    return this.http.request<SessionState>("GET", path, { query: { user_id }, signal: options.signal });
  }

  /**
   * The session's archived exchanges in turn order (turn n is at offset n - 1); those a forgotten memory hides come
   * with their texts withheld (empty, flag `hidden`).
   */
  async turns(
    user_id: string,
    session_id: string,
    options: CallOptions & { limit?: number; offset?: number } = {},
  ): Promise<ArchivedTurn[]> {
    const { signal, limit = 100, offset = 0 } = options;
    const path = `/v1/sessions/${seg(session_id)}/turns`;
    const data = await this.http.request<{ turns: ArchivedTurn[] }>("GET", path, {
      query: { user_id, limit, offset },
      signal,
    });
    return data.turns;
  }
}

/** The tenant's stored agents (`/v1/agents`). */
export class Agents {
  constructor(private readonly http: Transport) {}

  async list(options: CallOptions = {}): Promise<AgentRecord[]> {
    return (await this.http.request<{ agents: AgentRecord[] }>("GET", "/v1/agents", options)).agents;
  }

  /** One stored definition; `default` is the built-in agent's until the tenant stores its own. */
  async get(name: string, options: CallOptions = {}): Promise<AgentRecord> {
    return this.http.request<AgentRecord>("GET", `/v1/agents/${seg(name)}`, options);
  }

  /** Create or replace the agent `name` (the fields of an agent YAML file; validated by the server). */
  async put(name: string, definition: Record<string, unknown>, options: CallOptions = {}): Promise<AgentRecord> {
    const path = `/v1/agents/${seg(name)}`;
    return this.http.request<AgentRecord>("PUT", path, { json: definition, signal: options.signal });
  }

  async delete(name: string, options: CallOptions = {}): Promise<void> {
    await this.http.request("DELETE", `/v1/agents/${seg(name)}`, options);
  }
}

/** Stored contexts: what the model saw for a reply (`GET /v1/contexts/{id}`, `GET /v1/users/{id}/contexts`). */
export class Contexts {
  constructor(private readonly http: Transport) {}

  /** One response's context (only if it is `user_id`'s when given). */
  async get(context_id: string, options: CallOptions & { user_id?: string } = {}): Promise<Manifest> {
    const path = `/v1/contexts/${seg(context_id)}`;
    return this.http.request<Manifest>("GET", path, { query: { user_id: options.user_id }, signal: options.signal });
  }

  /** The user's latest contexts (of one session when given), newest first. */
  async recent(
    user_id: string,
    options: CallOptions & { session_id?: string; limit?: number } = {},
  ): Promise<Manifest[]> {
    const { signal, session_id, limit = 20 } = options;
    const path = `/v1/users/${seg(user_id)}/contexts`;
    const query = { session_id, limit };
    const data = await this.http.request<{ contexts: Manifest[] }>("GET", path, { query, signal });
    return data.contexts;
  }
}

/** The tenant's users (`GET /v1/users`). */
export class Users {
  constructor(private readonly http: Transport) {}

  /**
   * A page of the tenant's users (anyone with a memory or a session), in user-id order: pass the last `user_id` as
   * `after` for the next page (`limit` 1-1000).
   */
  async list(options: CallOptions & { after?: string; limit?: number } = {}): Promise<UserSummary[]> {
    const { signal, after, limit = 100 } = options;
    const query = { after, limit };
    const data = await this.http.request<{ users: UserSummary[] }>("GET", "/v1/users", { query, signal });
    return data.users;
  }
}

/** The tenant's webhook endpoints and their deliveries (`/v1/webhooks`; see docs/webhooks.md). */
export class Webhooks {
  constructor(private readonly http: Transport) {}

  /** A new endpoint; its signing `secret` is in this answer only. `events`: every event type when left out. */
  async create(
    url: string,
    options: CallOptions & { events?: string[]; description?: string; enabled?: boolean } = {},
  ): Promise<WebhookEndpoint> {
    const { signal, events, description = "", enabled = true } = options;
    const json = { url, events: events ?? null, description, enabled };
    return this.http.request<WebhookEndpoint>("POST", "/v1/webhooks", { json, signal });
  }

  async list(options: CallOptions = {}): Promise<WebhookEndpoint[]> {
    return (await this.http.request<{ webhooks: WebhookEndpoint[] }>("GET", "/v1/webhooks", options)).webhooks;
  }

  async get(webhook_id: string, options: CallOptions = {}): Promise<WebhookEndpoint> {
    return this.http.request<WebhookEndpoint>("GET", `/v1/webhooks/${seg(webhook_id)}`, options);
  }

  /** Change what is given (the URL is checked again). */
  async update(
    webhook_id: string,
    options: CallOptions & { url?: string; events?: string[]; enabled?: boolean; description?: string } = {},
  ): Promise<WebhookEndpoint> {
    const { signal, ...fields } = options;
    const json = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    return this.http.request<WebhookEndpoint>("PATCH", `/v1/webhooks/${seg(webhook_id)}`, { json, signal });
  }

  async delete(webhook_id: string, options: CallOptions = {}): Promise<void> {
    await this.http.request<unknown>("DELETE", `/v1/webhooks/${seg(webhook_id)}`, options);
  }

  /** The endpoint's recent deliveries, newest first (`status`: pending, delivered or failed). */
  async deliveries(
    webhook_id: string,
    options: CallOptions & { status?: string; limit?: number } = {},
  ): Promise<WebhookDelivery[]> {
    const { signal, status, limit = 50 } = options;
    const path = `/v1/webhooks/${seg(webhook_id)}/deliveries`;
    const data = await this.http.request<{ deliveries: WebhookDelivery[] }>("GET", path, {
      query: { status, limit },
      signal,
    });
    return data.deliveries;
  }

  /** Send a delivery again (the same event id), now. */
  async replay(delivery_id: string, options: CallOptions & { webhook_id?: string } = {}): Promise<WebhookDelivery> {
    const { signal, webhook_id } = options;
    const scope = webhook_id === undefined ? "" : `/${seg(webhook_id)}`;
    const path = `/v1/webhooks${scope}/deliveries/${seg(delivery_id)}/replay`;
    return this.http.request<WebhookDelivery>("POST", path, { signal });
  }
}
