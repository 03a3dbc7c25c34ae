import { describe, expect, test } from "vitest";
import { InputError, LimitReached, MemstackError, NotFound } from "../src/index.js";
import { client, user } from "./server.js";

const ms = client();

describe("memories", () => {
  test("a memory is added, read, listed, edited, forgotten, restored and deleted", async () => {
    const uid = user("crud");
    const memory = await ms.add(uid, "User drinks green tea every morning", {
      category: "preference",
      metadata: { source: "onboarding" },
    });
    expect(memory).toMatchObject({ user_id: uid, content: "User drinks green tea every morning" });
    expect(memory.category).toBe("preference");
    expect(memory.metadata).toEqual({ source: "onboarding" });

    expect(await ms.get(uid, memory.id)).toEqual(memory);
    expect((await ms.list(uid)).map((m) => m.id)).toEqual([memory.id]);
    expect(await ms.list(uid, { category: "goal" })).toEqual([]);
    expect((await ms.list(uid, { metadata: { source: "onboarding" } })).map((m) => m.id)).toEqual([memory.id]);
    expect(await ms.list(uid, { metadata: { source: "elsewhere" } })).toEqual([]);
    expect(await ms.count(uid)).toBe(1);

    const edited = await ms.edit(uid, memory.id, { content: "User drinks oolong tea every morning" });
    expect(edited.content).toBe("User drinks oolong tea every morning");
    const history = await ms.history(uid, memory.id);
    expect(history.map((e) => e.action)).toEqual(["create", "update"]);
    expect(history[1]?.before).toMatchObject({ content: "User drinks green tea every morning" });

    const forgotten = await ms.forget(uid, memory.id);
    expect(forgotten.is_active).toBe(false);
    expect(await ms.list(uid)).toEqual([]);
    expect((await ms.list(uid, { include_deleted: true })).map((m) => m.id)).toEqual([memory.id]);
    expect((await ms.restore(uid, memory.id)).is_active).toBe(true);

    await ms.delete(uid, memory.id);
    const gone = await ms.get(uid, memory.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(NotFound);
    expect(gone).toBeInstanceOf(InputError); // as in Python: NotFound is an InputError
    expect(gone).toMatchObject({ status: 404, type: "NotFound", kind: "memory", key: memory.id });
  });

  test("a memory the user already has is returned as a duplicate, not stored again", async () => {
    const uid = user("duplicate");
    const first = await ms.addResult(uid, "User lives in Lisbon");
    expect(first.action).toBe("created");
    const again = await ms.addResult(uid, "User lives in Lisbon");
    expect(again.action).toBe("duplicate");
    expect(again.memory.id).toBe(first.memory.id);
    expect(again.reason).not.toBe("");
    expect(await ms.count(uid)).toBe(1);
    expect((await ms.addResult(uid, "User lives in Lisbon", { force: true })).action).toBe("created");
  });

  test("search ranks by meaning, with a limit, a floor and filters", async () => {
    const uid = user("search");
    await ms.add(uid, "User is allergic to peanuts", { category: "fact" });
    await ms.add(uid, "User wants to run a marathon", { category: "goal", metadata: { topic: "sport" } });
    await ms.add(uid, "User prefers short answers", { category: "preference" });
    const hits = await ms.search(uid, "allergic to peanuts");
    expect(hits[0]?.memory.content).toBe("User is allergic to peanuts");
    expect(hits.length).toBe(3);
    for (const [a, b] of hits.slice(1).map((hit, i) => [hits[i]!, hit] as const)) {
      expect(a.score).toBeGreaterThanOrEqual(b.score);
    }
    expect(await ms.search(uid, "allergic to peanuts", { limit: 1 })).toHaveLength(1);
    expect((await ms.search(uid, "marathon", { category: "goal" })).map((h) => h.memory.category)).toEqual(["goal"]);
    expect((await ms.search(uid, "marathon", { metadata: { topic: "sport" } })).length).toBe(1);
    const floor = hits[0]!.score;
    expect((await ms.search(uid, "allergic to peanuts", { min_score: floor })).length).toBe(1);
  });

  test("forgetting what a query is about shows a preview first", async () => {
    const uid = user("forget-about");
    await ms.add(uid, "User has a cat named Miso");
    const preview = await ms.forgetAbout(uid, "cat named Miso", { dry_run: true });
    expect(preview.dry_run).toBe(true);
    expect(preview.memories.map((m) => m.content)).toEqual(["User has a cat named Miso"]);
    expect(await ms.count(uid)).toBe(1);
    const done = await ms.forgetAbout(uid, "cat named Miso");
    expect(done.memories).toHaveLength(1);
    expect(await ms.count(uid)).toBe(0);
  });

  test("a full tier is LimitReached with the tier, its limit and the upgrade prompt", async () => {
    const uid = user("limit");
    await ms.add(uid, "User plays the cello", { tier: "tiny" });
    await ms.add(uid, "User speaks Portuguese", { tier: "tiny" });
    const error = await ms.add(uid, "User collects stamps", { tier: "tiny" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimitReached);
    expect(error).toBeInstanceOf(MemstackError);
    expect(error).toMatchObject({ status: 409, tier: "tiny", limit: 2 });
    expect((error as LimitReached).upgrade_prompt).not.toBe("");
    const usage = await ms.usage(uid, { tier: "tiny" });
    expect(usage).toMatchObject({ active: 2, limit: 2, remaining: 0, tier: "tiny" });
  });

  test("bad input is an InputError naming the fields", async () => {
    const uid = user("bad");
    const error = await ms.search(uid, "tea", { limit: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect(error).toMatchObject({ status: 400, type: "InputError" });
    expect((error as InputError).fields.map((f) => f.field)).toEqual(["limit"]);
    const empty = await ms.search(uid, "   ").catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(InputError);
  });
});
