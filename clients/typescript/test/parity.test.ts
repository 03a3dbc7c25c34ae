// The Python client's methods, each on the TypeScript client under its camelCase name (the list comes from
// tests/clients/test_typescript.py, which reads it from memstack.client).
import { expect, test } from "vitest";
import { client } from "./server.js";

const python = JSON.parse(process.env["MEMSTACK_TEST_PYTHON_METHODS"] ?? "{}") as Record<string, string[]>;

test("every method of the Python client has its TypeScript twin", () => {
  const ms = client() as unknown as Record<string, Record<string, unknown>>;
  expect(Object.keys(python).sort()).toEqual(["agents", "client", "contexts", "sessions", "users", "webhooks"]);
  const missing: string[] = [];
  for (const [where, names] of Object.entries(python)) {
    const target = where === "client" ? ms : ms[where]!;
    for (const name of names) if (typeof target[name] !== "function") missing.push(`${where}.${name}`);
  }
  expect(missing).toEqual([]);
});
