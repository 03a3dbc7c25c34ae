// src/schema.d.ts is what `npm run generate` makes of openapi.json now (which tests/clients/test_typescript.py holds
// to the server's own document): a changed document without regenerated types fails here.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { expect, test } from "vitest";
// @ts-expect-error: a plain JavaScript module of the package's scripts, without types
import { documentUrl, generate, schemaUrl } from "../scripts/generate.mjs";

test("the generated types are those of the committed OpenAPI document", async () => {
  const committed = await readFile(schemaUrl as URL, "utf8");
  const digest = createHash("sha256").update(await readFile(documentUrl as URL)).digest("hex");
  expect(committed).toContain(`openapi.json sha256: ${digest}`);
  expect(committed === (await (generate as () => Promise<string>)()), "run `npm run generate`").toBe(true);
});
