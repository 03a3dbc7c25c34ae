// A write whose answer is lost is tried again with the same Idempotency-Key, and the server does it once: a proxy
// in front of the test server forwards the first attempt, then drops the connection instead of answering.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { MemstackClient } from "../src/index.js";
import { client, key, url, user } from "./server.js";

interface Seen {
  method: string;
  idempotencyKey: string | undefined;
  replayed: string | null;
}

const seen: Seen[] = [];
let dropNext = false;

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const proxy = createServer(async (request, response) => {
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name)),
  ) as Record<string, string>;
  const payload = await body(request);
  const answer = await fetch(url + request.url, {
    method: request.method,
    headers,
    body: payload.length > 0 ? payload.toString("utf8") : undefined,
  });
  const text = await answer.text();
  seen.push({
    method: request.method ?? "",
    idempotencyKey: request.headers["idempotency-key"] as string | undefined,
    replayed: answer.headers.get("idempotent-replayed"),
  });
  if (dropNext && request.method !== "GET") {
    dropNext = false;
    request.socket.destroy(); // the work was done; its answer never arrives
    return;
  }
  response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
  response.end(text);
});

let proxied: MemstackClient;

beforeAll(async () => {
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxied = new MemstackClient(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, { api_key: key });
});

afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
});

test("a write whose answer was lost is retried with its key and done once", async () => {
  const uid = user("retry");
  dropNext = true;
  const memory = await proxied.add(uid, "User sails on weekends");
  const writes = seen.filter((s) => s.method === "POST");
  expect(writes).toHaveLength(2);
  expect(writes[0]?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  expect(writes[1]?.idempotencyKey).toBe(writes[0]?.idempotencyKey);
  expect(writes[1]?.replayed).toBe("true"); // the first answer, not a second add
  expect((await client().list(uid)).map((m) => m.id)).toEqual([memory.id]);
  const history = await client().history(uid, memory.id);
  expect(history.map((e) => e.action)).toEqual(["create"]);
});

test("each call has a key of its own", async () => {
  const uid = user("keys");
  seen.length = 0;
  await proxied.add(uid, "User plays chess");
  await proxied.add(uid, "User plays go");
  const keys = seen.filter((s) => s.method === "POST").map((s) => s.idempotencyKey);
  expect(new Set(keys).size).toBe(2);
  expect(seen.filter((s) => s.method === "GET").every((s) => s.idempotencyKey === undefined)).toBe(true);
});
