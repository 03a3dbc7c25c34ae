/**
 * The shapes the client returns and takes: the server's own, from its OpenAPI document (`schema.d.ts`, generated),
 * named as the Python library names them. Fields keep the wire's (and Python's) snake_case names.
 */
import type { components } from "./schema.js";

type Schemas = components["schemas"];

export type Memory = Schemas["MemoryOut"];
export type Category = Schemas["Category"];
export type ScoredMemory = Schemas["SearchHit"];
export type MemoryEvent = Schemas["EventOut"];
export type MemoryUsage = Schemas["UsageOut"];
export type Forgetting = Schemas["ForgetOut"];
export type MemoryUpdate = Schemas["MemoryUpdateOut"];
export type ChatResult = Schemas["ChatOut"];
export type SessionSummary = Schemas["SessionSummaryOut"];
export type SessionState = Schemas["SessionOut"];
export type ArchivedTurn = Schemas["ArchivedTurnOut"];
export type RecallItem = Schemas["RecallItemOut"];
export type RecallKind = Schemas["RecallKind"];
export type IngestMessage = Schemas["IngestMessageIn"];
export type IngestResult = Schemas["IngestOut"];
export type ErasureReport = Schemas["ErasureOut"];
export type UserExport = Schemas["ExportOut"];
export type ImportReport = Schemas["ImportOut"];
export type WebhookEndpoint = Schemas["WebhookOut"];
export type WebhookDelivery = Schemas["DeliveryOut"];
export type AgentRecord = Schemas["AgentOut"];
export type Manifest = Schemas["ManifestOut"];
export type UserSummary = Schemas["UserSummaryOut"];

/** What an add did: the memory, and whether it was stored now (`created`) or already held (`duplicate`). */
export interface AddResult {
  memory: Memory;
  action: "created" | "duplicate" | (string & {});
  reason: string;
}

/** A memory tool the model used during a streamed turn. */
export interface ToolUse {
  name: string;
  arguments: Record<string, unknown>;
  result: string;
  error: boolean;
}

/** One event of `chatStream`: tokens as the model writes, tool uses, then one `done` with the turn's result. */
export type ChatEvent =
  | { type: "token"; text: string }
  | { type: "tool"; use: ToolUse }
  | { type: "done"; result: ChatResult };

/** Every call takes an `AbortSignal`, to give up on it. */
export interface CallOptions {
  signal?: AbortSignal;
}
