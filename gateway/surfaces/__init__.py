"""What clients talk to: Streamable HTTP (/mcp), the legacy SSE transport, REST and OpenAPI, /docs, /.well-known/mcp, /health."""
