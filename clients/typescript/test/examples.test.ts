// The examples of the README and docs/typescript.md, run against the test server as a user would run them.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, expect, test, vi } from "vitest";
import { client, key, mcpUrl, url, user } from "./server.js";

/** What `run` printed with console.log, one string per call. */
async function printed(run: () => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.join(" ")));
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return lines;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

const text = (path: string) => readFile(new URL(path, import.meta.url), "utf8");

test("the README's and the docs' examples are the files run here", async () => {
  const block = async (name: string) => "```ts\n" + (await text(`../examples/${name}`)) + "```\n";
  expect(await text("../README.md")).toContain(await block("quickstart.ts"));
  const docs = await text("../../../docs/typescript.md");
  for (const name of ["quickstart.ts", "ai-sdk-route.ts", "mcp-client.ts"]) expect(docs).toContain(await block(name));
});

test("the quickstart runs", async () => {
  await client().erase("alice"); // the example's user, as on a fresh server
  vi.stubEnv("MEMSTACK_URL", url);
  vi.stubEnv("MEMSTACK_API_KEY", key);
  const lines = await printed(() => import("../examples/quickstart.js"));
  expect(lines).toEqual([
    "Alice is vegetarian",
    "turn 1 used 1 memory",
    "turn 2, streamed: true",
    "no memory mem_unknown",
  ]);
});

test("the Vercel AI SDK route chats through /v1/chat/completions with the user's memory", async () => {
  vi.stubEnv("MEMSTACK_URL", url);
  vi.stubEnv("MEMSTACK_KEY", key);
  const { POST } = await import("../examples/ai-sdk-route.js");
  const uid = user("ai-sdk");
  const ms = client();
  await ms.add(uid, "User is allergic to shellfish", { category: "fact" });
  const messages = [{ id: "m1", role: "user", parts: [{ type: "text", text: "Suggest a dinner for me" }] }];
  const response = await POST(
    new Request("http://app.example/api/chat", { method: "POST", body: JSON.stringify({ messages, userId: uid }) }),
  );
  expect(response.status).toBe(200);
  const chunks = (await response.text())
    .split("\n")
    .filter((line) => line.startsWith("data: {"))
    .map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: string; errorText?: string });
  expect(chunks.filter((c) => c.type === "error")).toEqual([]);
  const text = chunks.map((c) => (c.type === "text-delta" ? c.delta : "")).join("");
  expect(text).not.toBe("");
  expect(chunks.at(-1)?.type).toBe("finish");

  const [session] = await ms.sessions.list(uid);
  expect(session?.turn_count).toBe(1);
  const state = await ms.sessions.get(uid, session!.session_id);
  expect(state.raw_window.map((m) => m.content)).toContain("Suggest a dinner for me");
  const [context] = await ms.contexts.recent(uid);
  expect(context?.entries.some((e) => e.text?.includes("User is allergic to shellfish"))).toBe(true);
});

test("the MCP client session uses memstack's tools, in the key's tenant", async () => {
  vi.stubEnv("MEMSTACK_MCP_URL", mcpUrl);
  vi.stubEnv("MEMSTACK_KEY", key);
  const lines = await printed(() => import("../examples/mcp-client.js"));
  expect(lines[0]).toBe("add_memory, forget_memory, list_memories, recall, restore_memory, search_memories");
  expect(lines[1]).toMatch(/^\d\.\d+ mem_\S+ \[general\] Bob is training for a marathon$/);
  expect(lines).toHaveLength(2);
  const [hit] = await client().search("bob", "marathon"); // the same memory, through the HTTP API
  expect(hit?.memory.content).toBe("Bob is training for a marathon");
});

test("the built package is importable by its name", async () => {
  // Node resolves a package's own name through its exports: dist/, as an installed copy would be.
  const program =
    'import { MemstackClient, NotFound } from "memstack"; console.log(typeof MemstackClient, typeof NotFound);';
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", program], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
  });
  expect(stdout.trim()).toBe("function function");
});
