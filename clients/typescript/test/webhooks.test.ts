import { describe, expect, test } from "vitest";
import { InputError } from "../src/index.js";
import { client } from "./server.js";

const ms = client();

describe("webhooks", () => {
  test("an endpoint is created with its secret shown once, read, changed, listed with its deliveries and deleted", async () => {
    // Disabled: no event is ever queued for it, so nothing is sent to this public address.
    const made = await ms.webhooks.create("http://93.184.216.34/hook", { events: ["memory.created"], enabled: false });
    expect(made.secret).toBeTruthy();
    expect(made).toMatchObject({ url: "http://93.184.216.34/hook", events: ["memory.created"], enabled: false });
    const read = await ms.webhooks.get(made.id);
    expect(read.secret ?? null).toBeNull();
    const changed = await ms.webhooks.update(made.id, { description: "billing sync" });
    expect(changed).toMatchObject({ id: made.id, description: "billing sync", enabled: false });
    expect((await ms.webhooks.list()).map((w) => w.id)).toContain(made.id);
    expect(await ms.webhooks.deliveries(made.id)).toEqual([]);
    await ms.webhooks.delete(made.id);
    expect((await ms.webhooks.list()).map((w) => w.id)).not.toContain(made.id);
  });

  test("a URL a keyed server will not call is refused, saying why", async () => {
    const refused = ms.webhooks.create("http://127.0.0.1:9/hook");
    await expect(refused).rejects.toBeInstanceOf(InputError);
    await expect(ms.webhooks.create("ftp://example.com/x")).rejects.toMatchObject({ status: 400 });
  });
});
