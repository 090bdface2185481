-- wrk script: GET one REST tool path as many distinct clients (bench/ab_cached_call.sh).
--
-- Environment: BENCH_PATH (default /v1/tools/list_conferences), BENCH_CLIENTS (distinct
-- X-PwC-MCP-Client identities per thread, default 1024). A response other than 200 counts
-- as bad; done() prints one "BENCH_JSON {...}" line like mcp.lua's.

local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  path = os.getenv("BENCH_PATH") or "/v1/tools/list_conferences"
  clients = tonumber(os.getenv("BENCH_CLIENTS") or "1024")
  prefix = "bench-" .. tid .. "-"
  sent = 0
  errors = 0
end

function request()
  sent = sent + 1
  wrk.headers["X-PwC-MCP-Client"] = prefix .. (sent % clients)
  return wrk.format("GET", path, nil, nil)
end

function response(status, headers, body)
  if status ~= 200 then errors = errors + 1 end
end

function done(summary, latency, requests)
  local errs = 0
  for _, thread in ipairs(threads) do errs = errs + (thread:get("errors") or 0) end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"bad_responses":%d,' ..
    '"socket_errors":%d,"timeouts":%d,"p50_us":%d,"p95_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, errs,
    e.connect + e.read + e.write, e.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max, latency.mean))
end
