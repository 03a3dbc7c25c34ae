import { MemstackClient, NotFound } from "memstack";

// The server's URL and key from $MEMSTACK_URL (default http://127.0.0.1:8700) and $MEMSTACK_API_KEY (or
// $MEMSTACK_KEY), or given: new MemstackClient("http://127.0.0.1:8700", { api_key: "msk_..." })
const ms = new MemstackClient();

await ms.add("alice", "Alice is vegetarian", { category: "preference" });
const hits = await ms.search("alice", "what does alice eat?");
console.log(hits[0]?.memory.content);

const turn = await ms.chat("alice", "What could I cook tonight?");
console.log(`turn ${turn.turn} used ${turn.memories_used.length} memory`);

let reply = "";
for await (const event of ms.chatStream("alice", "And for dessert?")) {
  if (event.type === "token") reply += event.text; // as the model writes
  if (event.type === "done") console.log(`turn ${event.result.turn}, streamed: ${reply === event.result.reply}`);
}

try {
  await ms.get("alice", "mem_unknown");
} catch (error) {
  if (!(error instanceof NotFound)) throw error;
  console.log(`no ${error.kind} ${error.key}`);
}
