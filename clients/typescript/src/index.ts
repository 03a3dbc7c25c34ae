/** memstack's TypeScript client: the HTTP API behind the Python client's method names, typed from the server's
 * OpenAPI document. */
export { DEFAULT_URL, MemstackClient } from "./client.js";
export type {
  AddOptions,
  ChatOptions,
  ClientOptions,
  EditOptions,
  IngestOptions,
  ListOptions,
  RecallOptions,
  SearchOptions,
} from "./client.js";
export * from "./errors.js";
export type { Agents, Contexts, Sessions, Users, Webhooks } from "./namespaces.js";
export type * from "./types.js";
export type { components, operations, paths } from "./schema.js";
