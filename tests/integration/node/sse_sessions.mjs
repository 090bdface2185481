// Many concurrent sessions of the TypeScript SDK's SSEClientTransport against one /sse URL.
// Usage: node sse_sessions.mjs <sse-url> <sessions> [v1|v2] [tools]: v1 is @modelcontextprotocol/sdk,
// v2 its successor @modelcontextprotocol/client; tools is how many tools the server lists.
// Prints one JSON summary line; exit 1 on any failure.
const [url, count, flavour, expected] = [process.argv[2], Number(process.argv[3] || "8"), process.argv[4] || "v1",
                                          Number(process.argv[5])];
const { Client, SSEClientTransport } = flavour === "v2"
  ? await import("@modelcontextprotocol/client")
  : { ...(await import("@modelcontextprotocol/sdk/client/index.js")),
      ...(await import("@modelcontextprotocol/sdk/client/sse.js")) };
const headers = { "X-PwC-MCP-Client": "ts-sse" };

async function session(index) {
  const transport = new SSEClientTransport(new URL(url), { requestInit: { headers }, eventSourceInit: {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers || {}), ...headers } }) } });
  const client = new Client({ name: "pwc-sse-test", version: "1.0.0" });
  await client.connect(transport);
  const version = client.getServerVersion();
  const tools = await client.listTools();
  const task = await client.callTool({ name: "get_task", arguments: { task: "image-classification" } });
  const missing = await client.callTool({ name: "get_task", arguments: { task: `no-such-task-${index}` } });
  await client.close();
  if (tools.tools.length !== expected) throw new Error(`expected ${expected} tools, got ${tools.tools.length}`);
  if (task.isError || task.structuredContent?.schema_version !== "v1") throw new Error("get_task failed");
  if (!missing.isError || !missing.content[0].text.startsWith("not_found:")) throw new Error("not_found expected");
  return version?.name;
}

try {
  const names = await Promise.all(Array.from({ length: count }, (_, i) => session(i)));
  console.log(JSON.stringify({ ok: true, sessions: names.length, server: names[0] }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, error: String(error?.stack || error) }));
  process.exit(1);
}
