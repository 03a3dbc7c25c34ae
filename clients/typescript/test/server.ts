// The memstack server the tests run against, and `memstack mcp --transport http` on the same data: started by
// tests/clients/test_typescript.py, which passes their URLs and an API key of tenant `acme` (tiers: free 50, tiny 2;
// the offline responder answers chat turns).
import { MemstackClient } from "../src/index.js";

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `$${name} is not set: these tests run against a real memstack server; run them with ` +
        "`pytest tests/clients/test_typescript.py` from the repository's root, which starts one",
    );
  }
  return value;
}

export const url = required("MEMSTACK_TEST_URL");
export const key = required("MEMSTACK_TEST_KEY");
/** `memstack mcp --transport http` on the same data: its /mcp endpoint. */
export const mcpUrl = required("MEMSTACK_TEST_MCP_URL");

export function client(options: { api_key?: string; retries?: number } = {}): MemstackClient {
  return new MemstackClient(url, { api_key: key, ...options });
}

/** A user id no other test uses. */
export function user(name: string): string {
  return `ts-${name}-${crypto.randomUUID().slice(0, 8)}`;
}
