// An MCP client session with memstack's MCP server over streamable HTTP (`memstack mcp --transport http`, endpoint
// /mcp): the API key's tenant scopes every tool call, as on the HTTP API, and each call names its user.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.MEMSTACK_MCP_URL ?? "http://127.0.0.1:8701/mcp");
const transport = new StreamableHTTPClientTransport(url, {
  requestInit: { headers: { Authorization: `Bearer ${process.env.MEMSTACK_KEY}` } }, // a memstack key
});
const client = new Client({ name: "memstack-example", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
console.log(tools.map((tool) => tool.name).sort().join(", "));

const remember = { content: "Bob is training for a marathon", user_id: "bob" };
await client.callTool({ name: "add_memory", arguments: remember });
const query = { query: "what is bob training for?", user_id: "bob" };
const found = await client.callTool({ name: "search_memories", arguments: query });
const [first] = found.content as { type: string; text: string }[];
console.log(first?.text); // one line per memory; found.structuredContent has every field

await client.close();
