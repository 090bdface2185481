-- wrk script: POST JSON-RPC bodies to /mcp as many distinct clients.
--
-- Environment (read by every wrk thread):
--   BENCH_BODIES   file with one JSON-RPC request body per line (required)
--   BENCH_THREADS  wrk's -t value, so threads interleave over the bodies
--   BENCH_OFFSET   first body index (lets a later run avoid bodies an earlier run warmed)
--   BENCH_CLIENTS  distinct X-PwC-MCP-Client identities per thread (default 1024)
--   BENCH_PROTOCOL MCP-Protocol-Version header for non-initialize requests ("" = none)
--   BENCH_CHECK_BODY "0" checks the status only (static methods): without a response()
--                  function wrk never copies bodies into Lua, and counts statuses >= 400
--                  itself (summary.errors.status)
--
-- Bodies are sent in file order (round robin), so a file written as
-- search, info, read, leaderboard, search, ... replays agent sessions in order.
-- A response counts as an error when its status is not 200, it is a JSON-RPC
-- error, or a tool result with isError true. done() prints one line
-- "BENCH_JSON {...}" with the counts and the latency percentiles in microseconds.

local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  bodies = {}
  for line in io.lines(os.getenv("BENCH_BODIES")) do
    if #line > 0 then bodies[#bodies + 1] = line end
  end
  step = tonumber(os.getenv("BENCH_THREADS") or "1")
  clients = tonumber(os.getenv("BENCH_CLIENTS") or "1024")
  idx = tonumber(os.getenv("BENCH_OFFSET") or "0") + tid
  sent = 0
  errors = 0
  reported = 0
  local protocol = os.getenv("BENCH_PROTOCOL") or ""
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  if protocol ~= "" then wrk.headers["MCP-Protocol-Version"] = protocol end
  prefix = "bench-" .. tid .. "-"
end

function request()
  local body = bodies[(idx % #bodies) + 1]
  idx = idx + step
  sent = sent + 1
  wrk.headers["X-PwC-MCP-Client"] = prefix .. (sent % clients)
  return wrk.format(nil, "/mcp", nil, body)
end

local check_body = os.getenv("BENCH_CHECK_BODY") ~= "0"

local function check(status, headers, body)
  local bad = status ~= 200
    or string.find(string.sub(body, 1, 48), '"error"', 1, true)
    or string.find(body, '"isError":true', 1, true)
    or string.find(body, '"isError": true', 1, true)
  if bad then
    errors = errors + 1
    if reported < 2 then
      reported = reported + 1
      io.stderr:write("BENCH_ERROR status=" .. status .. " body=" .. string.sub(body, 1, 300) .. "\n")
    end
  end
end

if check_body then
  response = check
end

function done(summary, latency, requests)
  local errs = 0
  for _, thread in ipairs(threads) do errs = errs + (thread:get("errors") or 0) end
  if not check_body then errs = summary.errors.status end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"bad_responses":%d,' ..
    '"socket_errors":%d,"timeouts":%d,"p50_us":%d,"p95_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, errs,
    e.connect + e.read + e.write, e.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max, latency.mean))
end
