// One TypeScript SDK SSE session whose second hybrid search is refused (semantic limit 1):
// the refused call must reject alone and the session go on. Usage: node sse_refusal.mjs <sse-url> [v1|v2].
// Prints one JSON line: the refusal's message and data, and whether the later calls worked.
const [url, flavour] = [process.argv[2], process.argv[3] || "v1"];
const { Client, SSEClientTransport } = flavour === "v2"
  ? await import("@modelcontextprotocol/client")
  : { ...(await import("@modelcontextprotocol/sdk/client/index.js")),
      ...(await import("@modelcontextprotocol/sdk/client/sse.js")) };
const headers = { "X-PwC-MCP-Client": `ts-refusal-${flavour}` };
const transport = new SSEClientTransport(new URL(url), { requestInit: { headers }, eventSourceInit: {
  fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers || {}), ...headers } }) } });
const client = new Client({ name: "pwc-sse-refusal", version: "1.0.0" });
const seen = {};
try {
  await client.connect(transport);
  await client.callTool({ name: "search_papers", arguments: { query: "attention" } });
  try {
    await client.callTool({ name: "search_papers", arguments: { query: "transformers" } });
    seen.refused = false;
  } catch (error) {
    seen.refused = true;
    seen.message = String(error?.message || error);
    seen.data = error?.data ?? null;
  }
  const task = await client.callTool({ name: "get_task", arguments: { task: "image-classification" } });
  seen.task_ok = !task.isError;
  seen.tools = (await client.listTools()).tools.length;
  await client.close();
  console.log(JSON.stringify({ ok: true, ...seen }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, ...seen, error: String(error?.stack || error) }));
  process.exit(1);
}
