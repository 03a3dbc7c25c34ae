/**
 * `MemstackClient`: memstack's HTTP API behind the Python client's method names (`AsyncMemstackClient`, itself the
 * embedded library's `AsyncMemstack`), camelCased as TypeScript names methods (`chat_stream` is `chatStream`,
 * `add_result` is `addResult`). Arguments the Python methods take by keyword are an options object here, with the
 * same snake_case names the HTTP API and Python use (`{ session_id, min_score }`); results are the server's JSON,
 * typed from its OpenAPI document (`types.ts`).
 *
 * Users are named by id; their tenant is the API key's (`default` for a server in local mode). Errors are
 * `errors.ts`'s, mapped from the server's error bodies as the Python client maps them.
 */
import { ConfigError, MalformedResponse, errorFrom } from "./errors.js";
import { Transport } from "./http.js";
import { events } from "./http.js";
import { Agents, Contexts, Sessions, Users, Webhooks, seg } from "./namespaces.js";
import type {
  AddResult,
  CallOptions,
  Category,
  ChatEvent,
  ChatResult,
  ErasureReport,
  Forgetting,
  ImportReport,
  IngestMessage,
  IngestResult,
  Memory,
  MemoryEvent,
  MemoryUsage,
  RecallItem,
  RecallKind,
  ScoredMemory,
  SessionSummary,
  UserExport,
} from "./types.js";

/** Where `memstack serve` listens by default. */
export const DEFAULT_URL = "http://127.0.0.1:8700";

export interface ClientOptions {
  /** The server's API key (`memstack keys create --tenant NAME`); none for a server in local mode. */
  api_key?: string;
  /** Seconds one request may take (chat turns and imports run in the request: leave room for them). Default 120. */
  timeout?: number;
  /** How many times a call is tried again when no answer came or the server was busy. Default 2. */
  retries?: number;
}

export interface ChatOptions extends CallOptions {
  /** Omit to continue the user's current session; `new_session: true` starts one. */
  session_id?: string;
  new_session?: boolean;
  /** Session metadata: timezone, local_time, user_agent, location, tier, coins, flags (never stored). */
  metadata?: Record<string, unknown>;
  /** A stored agent's name. */
  agent?: string;
  /** false: no long-term memory read or written. */
  memory?: boolean;
  /** true: nothing about this turn is stored. */
  temporary?: boolean;
}

export interface AddOptions extends CallOptions {
  category?: Category;
  tier?: string;
  agent_id?: string;
  /** Store it even when the user already has the same memory. */
  force?: boolean;
  metadata?: Record<string, unknown>;
}

export interface ListOptions extends CallOptions {
  category?: Category | readonly Category[];
  /** Keep memories containing every word of it. */
  text?: string;
  include_deleted?: boolean;
  limit?: number;
  offset?: number;
  /** Keep memories whose metadata has each key given with the same value. */
  metadata?: Record<string, unknown>;
}

export interface SearchOptions extends CallOptions {
  limit?: number;
  category?: Category | readonly Category[];
  agent_id?: string;
  metadata?: Record<string, unknown>;
  /** Leave out memories scoring below it (cosine similarity, -1 to 1). */
  min_score?: number;
}

export interface EditOptions extends CallOptions {
  content?: string;
  category?: Category;
  confidence?: number;
  /** Replaces the whole object; `{}` clears it. */
  metadata?: Record<string, unknown>;
}

export interface RecallOptions extends CallOptions {
  limit?: number;
  /** The time the question is asked at (ISO 8601 or a Date): "last week" is read against it. */
  at?: string | Date;
  kinds?: readonly RecallKind[];
  exclude_session?: string;
  agent_id?: string;
  min_score?: number;
}

export interface IngestOptions extends CallOptions {
  /** The speaker who is the user (messages without `role`). */
  user_speaker?: string;
  agent?: string;
  /** false: import the messages without detecting memories in them. */
  capture?: boolean;
  tier?: string;
  /** false: leave the session open (no summary line yet). */
  end?: boolean;
}

const categories = (value: Category | readonly Category[] | undefined): Category[] | undefined =>
  value === undefined ? undefined : typeof value === "string" ? [value as Category] : [...value];

/** `value` without its undefined fields (the server's defaults apply to what is left out). */
function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function environment(name: string): string | undefined {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env?.[name] || undefined;
}

export class MemstackClient {
  readonly sessions: Sessions;
  readonly agents: Agents;
  readonly contexts: Contexts;
  readonly users: Users;
  readonly webhooks: Webhooks;
  private readonly http: Transport;
  private tenantName: Promise<string> | undefined;

  /**
   * `baseUrl` falls back to `$MEMSTACK_URL` then `http://127.0.0.1:8700`; `api_key` to `$MEMSTACK_API_KEY`, then
   * `$MEMSTACK_KEY` (none: a server in local mode) where the runtime has an environment.
   */
  constructor(baseUrl?: string, options: ClientOptions = {}) {
    const url = baseUrl || environment("MEMSTACK_URL") || DEFAULT_URL;
    if (!/^https?:\/\//.test(url)) {
      const source = baseUrl ? "baseUrl" : "$MEMSTACK_URL";
      const hint = `give the server's, e.g. ${DEFAULT_URL}`;
      throw new ConfigError(`${source} = ${JSON.stringify(url)} is not an http(s) URL; ${hint}`);
    }
    const key = options.api_key ?? (environment("MEMSTACK_API_KEY") || environment("MEMSTACK_KEY"));
    this.http = new Transport(url, key, options.timeout ?? 120, Math.max(0, options.retries ?? 2));
    this.sessions = new Sessions(this.http);
    this.agents = new Agents(this.http);
    this.contexts = new Contexts(this.http);
    this.users = new Users(this.http);
    this.webhooks = new Webhooks(this.http);
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /** The tenant this client acts for (the API key's), asked of the server once (`GET /v1/whoami`). */
  tenant(options: CallOptions = {}): Promise<string> {
    this.tenantName ??= this.http
      .request<{ tenant: string }>("GET", "/v1/whoami", options)
      .then((data) => data.tenant)
      .catch((error: unknown) => {
        this.tenantName = undefined;
        throw error;
      });
    return this.tenantName;
  }

  // -- chat turns -----------------------------------------------------------------------------------------------

  private chatBody(user_id: string, message: string, options: ChatOptions, stream: boolean) {
    const { signal: _, ...rest } = options;
    const flags = { new_session: rest.new_session || undefined, stream: stream || undefined };
    return defined({ user_id, message, ...rest, ...flags });
  }

  /** One turn with memory (`POST /v1/chat`): the reply, what it saved, the context it was given. */
  async chat(user_id: string, message: string, options: ChatOptions = {}): Promise<ChatResult> {
    const json = this.chatBody(user_id, message, options, false);
    return this.http.request<ChatResult>("POST", "/v1/chat", { json, signal: options.signal });
  }

  /**
   * `chat`, streamed (server-sent events): `token` events as the model writes, `tool` when the model used a memory
   * tool, then one `done` with the turn's result. A request the server refuses throws before the first event; a
   * turn that fails midway throws where its `done` would be. Leaving the loop early closes the connection, which
   * releases the session.
   */
  async *chatStream(user_id: string, message: string, options: ChatOptions = {}): AsyncGenerator<ChatEvent> {
    const json = this.chatBody(user_id, message, options, true);
    const response = await this.http.stream("POST", "/v1/chat", { json, signal: options.signal });
    for await (const { event, data } of events(response.body!)) {
      const parsed = JSON.parse(data) as Record<string, unknown>;
      if (event === "token") {
        yield { type: "token", text: String(parsed["text"]) };
      } else if (event === "tool") {
        const use = {
          name: String(parsed["name"]),
          arguments: (parsed["arguments"] ?? {}) as Record<string, unknown>,
          result: String(parsed["result"] ?? ""),
          error: Boolean(parsed["error"]),
        };
        yield { type: "tool", use };
      } else if (event === "done") {
        yield { type: "done", result: parsed as unknown as ChatResult };
        return;
      } else if (event === "error") {
        const error = (parsed["error"] ?? {}) as { status?: number };
        throw errorFrom(Number(error.status) || 500, parsed, data);
      }
    }
    throw new MalformedResponse("the chat stream ended without its done event", { status: 200 });
  }

  /** Close a session and write its one-line summary (`POST /v1/sessions/{id}/end`); null when it had no turns. */
  async endSession(user_id: string, session_id: string, options: CallOptions = {}): Promise<SessionSummary | null> {
    const path = `/v1/sessions/${seg(session_id)}/end`;
    const data = await this.http.request<{ summary: SessionSummary | null }>("POST", path, {
      query: { user_id },
      signal: options.signal,
    });
    return data.summary ?? null;
  }

  // -- recall and import ----------------------------------------------------------------------------------------

  /** Memories and archived messages best matching `query`, ranked together (`POST /v1/users/{id}/recall`). */
  async recall(user_id: string, query: string, options: RecallOptions = {}): Promise<RecallItem[]> {
    const { signal, at, ...rest } = options;
    const json = defined({ query, limit: 10, ...rest, at: at instanceof Date ? at.toISOString() : at });
    const path = `/v1/users/${seg(user_id)}/recall`;
    return (await this.http.request<{ results: RecallItem[] }>("POST", path, { json, signal })).results;
  }

  /** Import a past conversation as a session (`POST /v1/users/{id}/ingest`), detecting memories in it. */
  async ingest(
    user_id: string,
    session_id: string,
    messages: readonly IngestMessage[],
    options: IngestOptions = {},
  ): Promise<IngestResult> {
    const { signal, ...rest } = options;
    const json = defined({ session_id, messages: messages.map((m) => defined(m)), ...rest });
    return this.http.request<IngestResult>("POST", `/v1/users/${seg(user_id)}/ingest`, { json, signal });
  }

  // -- memory management ----------------------------------------------------------------------------------------

  private memories(user_id: string, memory_id?: string): string {
    const path = `/v1/users/${seg(user_id)}/memories`;
    return memory_id === undefined ? path : `${path}/${seg(memory_id)}`;
  }

  /** Store one memory (`POST …/memories`): a memory the user already has is returned, not stored again. */
  async add(user_id: string, content: string, options: AddOptions = {}): Promise<Memory> {
    return (await this.addResult(user_id, content, options)).memory;
  }

  /** `add`, saying what it did: `created`, or `duplicate` (with the reason). */
  async addResult(user_id: string, content: string, options: AddOptions = {}): Promise<AddResult> {
    const { signal, force, ...rest } = options;
    const json = defined({ content, ...rest, force: force || undefined });
    type Added = Memory & { action?: string; reason?: string };
    const { action, reason, ...memory } = await this.http.request<Added>("POST", this.memories(user_id), {
      json,
      signal,
    });
    return { memory, action: action || "created", reason: reason ?? "" };
  }

  async get(user_id: string, memory_id: string, options: CallOptions = {}): Promise<Memory> {
    return this.http.request<Memory>("GET", this.memories(user_id, memory_id), options);
  }

  /** The user's memories, newest first. */
  async list(user_id: string, options: ListOptions = {}): Promise<Memory[]> {
    const { signal, category, text, metadata, ...rest } = options;
    const query = {
      ...rest,
      category: categories(category),
      q: text,
      metadata: metadata && Object.keys(metadata).length > 0 ? JSON.stringify(metadata) : undefined,
    };
    const data = await this.http.request<{ memories: Memory[] }>("GET", this.memories(user_id), { query, signal });
    return data.memories;
  }

  /** The `limit` (default 5) active memories closest in meaning to `query`, best first. */
  async search(user_id: string, query: string, options: SearchOptions = {}): Promise<ScoredMemory[]> {
    const { signal, category, metadata, ...rest } = options;
    const json = defined({
      query,
      limit: 5,
      ...rest,
      category: categories(category),
      metadata: metadata && Object.keys(metadata).length > 0 ? metadata : undefined,
    });
    const path = `${this.memories(user_id)}/search`;
    return (await this.http.request<{ results: ScoredMemory[] }>("POST", path, { json, signal })).results;
  }

  /** Change content, category, confidence or metadata (`PATCH …/memories/{id}`). */
  async edit(user_id: string, memory_id: string, options: EditOptions): Promise<Memory> {
    const { signal, ...rest } = options;
    return this.http.request<Memory>("PATCH", this.memories(user_id, memory_id), { json: defined(rest), signal });
  }

  /** Soft delete (`DELETE …/memories/{id}`): the memory stops being used but can be restored. */
  async forget(user_id: string, memory_id: string, options: CallOptions = {}): Promise<Memory> {
    const data = await this.http.request<{ memory: Memory }>("DELETE", this.memories(user_id, memory_id), options);
    return data.memory;
  }

  /** Forget every memory `query` is about, with what it came from; `dry_run`: the preview, nothing changed. */
  async forgetAbout(
    user_id: string,
    query: string,
    options: CallOptions & { dry_run?: boolean } = {},
  ): Promise<Forgetting> {
    const json = { query, dry_run: options.dry_run ?? false };
    return this.http.request<Forgetting>("POST", `${this.memories(user_id)}/forget`, { json, signal: options.signal });
  }

  /** Make a forgotten memory active again; the tier limit applies. */
  async restore(user_id: string, memory_id: string, options: CallOptions & { tier?: string } = {}): Promise<Memory> {
    const path = `${this.memories(user_id, memory_id)}/restore`;
    return this.http.request<Memory>("POST", path, { query: { tier: options.tier }, signal: options.signal });
  }

  /** Permanent delete: content and vector are gone; only the history remains. */
  async delete(user_id: string, memory_id: string, options: CallOptions = {}): Promise<void> {
    const path = this.memories(user_id, memory_id);
    await this.http.request("DELETE", path, { query: { permanent: true }, signal: options.signal });
  }

  /** A memory's history, oldest first. */
  async history(user_id: string, memory_id: string, options: CallOptions = {}): Promise<MemoryEvent[]> {
    const path = `${this.memories(user_id, memory_id)}/history`;
    return (await this.http.request<{ events: MemoryEvent[] }>("GET", path, options)).events;
  }

  /** Active memories of the user. */
  async count(user_id: string, options: CallOptions = {}): Promise<number> {
    return (await this.usage(user_id, options)).active;
  }

  /** The user's memories against their tier's limit, and their model calls' tokens and cost. */
  async usage(user_id: string, options: CallOptions & { tier?: string } = {}): Promise<MemoryUsage> {
    const path = `/v1/users/${seg(user_id)}/usage`;
    return this.http.request<MemoryUsage>("GET", path, { query: { tier: options.tier }, signal: options.signal });
  }

  // -- a user as a whole: data access and erasure -----------------------------------------------------------------

  /** Everything held about the user (`GET /v1/users/{id}/export`). */
  async export(user_id: string, options: CallOptions = {}): Promise<UserExport> {
    return this.http.request<UserExport>("GET", `/v1/users/${seg(user_id)}/export`, options);
  }

  /**
   * Import a user from their export document (`POST /v1/users/import`) into the key's tenant: the server checks it
   * (version, shape, sha256) and writes it in one transaction; importing it again changes nothing.
   */
  async importUser(document: UserExport | string, options: CallOptions = {}): Promise<ImportReport> {
    const body = typeof document === "string" ? (JSON.parse(document) as unknown) : document;
    const data = await this.http.request<{ users: ImportReport[] }>("POST", "/v1/users/import", {
      json: body,
      signal: options.signal,
    });
    const [report] = data.users;
    if (report === undefined) throw new Error("the server answered an import without a report");
    return report;
  }

  /** Remove everything held about the user in their tenant (`DELETE /v1/users/{id}`). */
  async erase(user_id: string, options: CallOptions = {}): Promise<ErasureReport> {
    return this.http.request<ErasureReport>("DELETE", `/v1/users/${seg(user_id)}`, options);
  }
}
