// A chat route of a Next.js app (app/api/chat/route.ts) with memory: the Vercel AI SDK's OpenAI provider pointed at
// memstack's OpenAI-compatible endpoint. memstack runs each call as a chat turn of the user named in `user`: it
// assembles the context (the user's memories, the session's), answers with its configured model, and remembers.
import { createOpenAI } from "@ai-sdk/openai";
import { convertToModelMessages, streamText, type UIMessage } from "ai";

const memstack = createOpenAI({
  baseURL: `${process.env.MEMSTACK_URL ?? "http://127.0.0.1:8700"}/v1`,
  apiKey: process.env.MEMSTACK_KEY ?? "local", // a memstack key (any text for a server in local mode)
});

export async function POST(request: Request): Promise<Response> {
  const { messages, userId }: { messages: UIMessage[]; userId: string } = await request.json();
  const result = streamText({
    model: memstack.chat("memstack"), // the chat completions API; "memstack": the server's configured model
    messages: await convertToModelMessages(messages),
    providerOptions: { openai: { user: userId } }, // whose memory this is
  });
  return result.toUIMessageStreamResponse();
}
