import { describe, expect, test } from "vitest";
import type { ChatEvent } from "../src/index.js";
import { NotFound } from "../src/index.js";
import { client, user } from "./server.js";

const ms = client();

describe("chat", () => {
  test("a turn answers, continues the session, and shows what the model saw", async () => {
    const uid = user("chat");
    await ms.add(uid, "User is vegetarian", { category: "preference" });
    const first = await ms.chat(uid, "What could I cook tonight?", { metadata: { timezone: "Europe/Lisbon" } });
    expect(first).toMatchObject({ turn: 1, offline: true });
    expect(first.reply).not.toBe("");
    expect(first.memories_used).toHaveLength(1);
    const second = await ms.chat(uid, "And tomorrow?");
    expect(second).toMatchObject({ turn: 2, session_id: first.session_id });
    const fresh = await ms.chat(uid, "Something else", { new_session: true });
    expect(fresh.session_id).not.toBe(first.session_id);

    const context = await ms.contexts.get(first.context_id!, { user_id: uid });
    expect(context.context_id).toBe(first.context_id);
    expect(context.entries.some((e) => e.text?.includes("User is vegetarian"))).toBe(true);
    const recent = await ms.contexts.recent(uid, { session_id: first.session_id });
    expect(recent.map((c) => c.context_id)).toEqual([second.context_id, first.context_id]);
  });

  test("a streamed turn gives tokens, then its result", async () => {
    const uid = user("stream");
    const events: ChatEvent[] = [];
    for await (const event of ms.chatStream(uid, "Tell me something")) events.push(event);
    const last = events.at(-1);
    expect(last?.type).toBe("done");
    const tokens = events.filter((e) => e.type === "token").map((e) => e.text);
    expect(tokens.length).toBeGreaterThan(1);
    if (last?.type !== "done") throw new Error("no done event");
    expect(tokens.join("")).toBe(last.result.reply);
    expect(last.result.turn).toBe(1);
  });

  test("leaving a stream early releases the session for the next turn", async () => {
    const uid = user("stream-early");
    const first = await ms.chat(uid, "Hello there");
    for await (const event of ms.chatStream(uid, "Tell me a long story", { session_id: first.session_id })) {
      expect(event.type).toBe("token");
      break;
    }
    const next = await ms.chat(uid, "Still there?", { session_id: first.session_id });
    expect(next.session_id).toBe(first.session_id);
  });

  test("a refused streamed turn throws before any event", async () => {
    const uid = user("stream-refused");
    const events = ms.chatStream(uid, "Hi", { agent: "no-such-agent" });
    await expect(events.next()).rejects.toBeInstanceOf(NotFound);
  });

  test("sessions are listed, read and ended with a summary line", async () => {
    const uid = user("sessions");
    const turn = await ms.chat(uid, "I am planning a trip to Japan in April");
    await ms.chat(uid, "I want to see the cherry blossoms");
    const listed = await ms.sessions.list(uid);
    expect(listed.map((s) => s.session_id)).toEqual([turn.session_id]);
    const state = await ms.sessions.get(uid, turn.session_id);
    expect(state.turn_count).toBe(2);
    expect(state.raw_window.map((m) => m.content)).toContain("I want to see the cherry blossoms");
    const turns = await ms.sessions.turns(uid, turn.session_id);
    expect(turns.map((t) => [t.turn, t.user])).toEqual([
      [1, "I am planning a trip to Japan in April"],
      [2, "I want to see the cherry blossoms"],
    ]);
    expect((await ms.sessions.turns(uid, turn.session_id, { offset: 1 })).map((t) => t.turn)).toEqual([2]);
    const summary = await ms.endSession(uid, turn.session_id);
    expect(summary?.session_id).toBe(turn.session_id);
    expect((await ms.sessions.list(uid))[0]?.ended).toBe(true);
    await expect(ms.sessions.get(uid, "no-such-session")).rejects.toMatchObject({ kind: "session" });
  });
});
