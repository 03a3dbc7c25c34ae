import { describe, expect, test } from "vitest";
import { ConfigError, InputError, StoreUnavailable, Unauthorized } from "../src/index.js";
import { MemstackClient } from "../src/index.js";
import { client, url, user } from "./server.js";

const ms = client();

describe("a user as a whole", () => {
  test("a past conversation is imported and recalled", async () => {
    const uid = user("ingest");
    const result = await ms.ingest(uid, "trip-2025", [
      { role: "user", content: "We booked the flights to Osaka for May", at: "2025-03-02T10:00:00Z" },
      { role: "assistant", content: "Great, Osaka in May it is." },
    ]);
    expect(result.session_id).toBe("trip-2025");
    expect(result.turns).toEqual(["trip-2025:1"]);
    expect(result.summary?.ended).toBe(true);
    const items = await ms.recall(uid, "flights to Osaka", { kinds: ["turn"] });
    expect(items[0]).toMatchObject({ kind: "turn", session_id: "trip-2025" });
    expect(items[0]?.text).toContain("Osaka");
  });

  test("export holds everything about the user, and erase removes it", async () => {
    const uid = user("erase");
    await ms.add(uid, "User is learning Korean");
    await ms.chat(uid, "Annyeong!");
    const document = await ms.export(uid);
    expect(document).toMatchObject({ format: "memstack.user-export", tenant: "acme", user_id: uid });
    expect(document.memories.length).toBe(1);
    expect(document.sessions.length).toBe(1);
    expect((await ms.users.list()).map((u) => u.user_id)).toContain(uid);

    const report = await ms.erase(uid);
    expect(report).toMatchObject({ tenant: "acme", user_id: uid });
    expect(report.total).toBeGreaterThan(0);
    expect(await ms.list(uid)).toEqual([]);
    expect((await ms.users.list()).map((u) => u.user_id)).not.toContain(uid);
  });

  test("agents are stored, read, listed and deleted", async () => {
    const name = user("agent");
    const definition = { name, core: { identity: "A careful cooking assistant" } };
    const stored = await ms.agents.put(name, definition);
    expect(stored.name).toBe(name);
    expect((await ms.agents.get(name)).fingerprint).toBe(stored.fingerprint);
    expect((await ms.agents.list()).map((a) => a.name)).toContain(name);
    const uid = user("agent-chat");
    expect((await ms.chat(uid, "Hello", { agent: name })).reply).not.toBe("");
    await ms.agents.delete(name);
    await expect(ms.agents.get(name)).rejects.toMatchObject({ status: 404, kind: "agent" });
    await expect(ms.agents.put(name, { core: 5 })).rejects.toBeInstanceOf(InputError);
  });
});

describe("the client", () => {
  test("acts for its key's tenant", async () => {
    expect(await ms.tenant()).toBe("acme");
    expect(ms.baseUrl).toBe(url);
  });

  test("an unknown key is Unauthorized", async () => {
    const stranger = new MemstackClient(url, { api_key: "msk_not_a_key" });
    await expect(stranger.tenant()).rejects.toBeInstanceOf(Unauthorized);
    await expect(stranger.list("anyone")).rejects.toMatchObject({ status: 401, type: "Unauthorized" });
  });

  test("a bad URL is a ConfigError, and a server that does not answer StoreUnavailable", async () => {
    expect(() => new MemstackClient("localhost:8700")).toThrow(ConfigError);
    const nowhere = new MemstackClient("http://127.0.0.1:9", { retries: 0 });
    await expect(nowhere.tenant()).rejects.toBeInstanceOf(StoreUnavailable);
  });
});
