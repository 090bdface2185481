#!/usr/bin/env bash
# Same-run A/B of the cached tools/call (list_conferences) between two checkouts, each with
# its own `uv sync`ed .venv: 1 gateway + 2 workers over Redis, and embedded; CONNS connections
# (default 64), SECONDS_PER_RUN s per run (default 8), the two checkouts interleaved ROUNDS
# times (default 3) so host drift hits both.
#   bash bench/ab_cached_call.sh /path/to/checkout-a /path/to/checkout-b [ROUNDS]
# Each run measures, on the same server: `mcp` = POST /mcp tools/call at CONNS connections,
# `rest` = GET /v1/tools/list_conferences at CONNS connections, and `mcp1` = POST /mcp at one
# connection (its p50 is the latency the Redis hop is judged by: redis mcp1 p50 − embedded
# mcp1 p50). Prints one line per measurement: checkout, mode, surface, calls/s, p50 µs.
# Ports: AB_REDIS_PORT, AB_CAT_PORT, AB_GW_PORT (defaults 16399, 18124, 17870).
# Needs redis-server, wrk and curl.
set -u
A=$1; B=$2; ROUNDS=${3:-3}
CONNS=${CONNS:-64}; SECONDS_PER_RUN=${SECONDS_PER_RUN:-8}
HERE=$(cd "$(dirname "$0")" && pwd)
REDIS_PORT=${AB_REDIS_PORT:-16399}; CAT_PORT=${AB_CAT_PORT:-18124}; GW_PORT=${AB_GW_PORT:-17870}
redis-server --port $REDIS_PORT --save "" --appendonly no --daemonize no --loglevel warning > /dev/null 2>&1 &
RPID=$!
(cd "$A" && exec .venv/bin/python -m catalog serve --sample --port $CAT_PORT > /dev/null 2>&1) &
CPID=$!
BODIES=$(mktemp)
sleep 4
echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_conferences","arguments":{}}}' > "$BODIES"
run() { # $1 tree  $2 mode
  local tree=$1 mode=$2
  export PWC_API_URL=http://127.0.0.1:$CAT_PORT/api/v1 PWC_MCP_CURSOR_KEY_CURRENT=bench-key-0123456789abcdef0123456 PORT=$GW_PORT LOG_LEVEL=WARNING \
    PWC_MCP_REQUEST_LIMIT=10000 PWC_MCP_CONCURRENCY_LIMIT=1000 PWC_MCP_GLOBAL_CONCURRENCY_LIMIT=1000
  local pids=()
  if [ $mode = redis ]; then
    export PWC_MCP_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0; redis-cli -p $REDIS_PORT flushall > /dev/null
    (cd $tree && exec .venv/bin/pwc-mcp worker > /dev/null 2>&1) & pids+=($!)
    (cd $tree && exec .venv/bin/pwc-mcp worker > /dev/null 2>&1) & pids+=($!)
  else unset PWC_MCP_REDIS_URL; fi
  (cd $tree && exec .venv/bin/pwc-mcp gateway > /dev/null 2>&1) & pids+=($!)
  for i in $(seq 100); do curl -sf http://127.0.0.1:$GW_PORT/health > /dev/null && break; sleep 0.2; done
  curl -s http://127.0.0.1:$GW_PORT/mcp -H 'Content-Type: application/json' -d @"$BODIES" > /dev/null
  measure "$tree" $mode mcp 2 "$CONNS" mcp.lua
  measure "$tree" $mode rest 2 "$CONNS" rest.lua
  measure "$tree" $mode mcp1 1 1 mcp.lua
  kill ${pids[@]} 2>/dev/null; wait ${pids[@]} 2>/dev/null; sleep 1
}
measure() { # $1 tree  $2 mode  $3 label  $4 threads  $5 connections  $6 wrk script
  BENCH_BODIES="$BODIES" BENCH_THREADS=$4 BENCH_OFFSET=0 BENCH_CLIENTS=1024 BENCH_PROTOCOL="" BENCH_CHECK_BODY=1 \
    wrk -t "$4" -c "$5" -d "${SECONDS_PER_RUN}s" --timeout 30s -s "$HERE/wrk/$6" http://127.0.0.1:$GW_PORT | \
    grep BENCH_JSON | python3 -c "import sys,json; d=json.loads(sys.stdin.read().split(' ',1)[1]); print('$(basename "$1") $2 $3', round(d['requests']/(d['duration_us']/1e6)), 'rps p50_us', d['p50_us'], 'bad', d['bad_responses'])"
}
for _ in $(seq "$ROUNDS"); do
  for t in "$A" "$B"; do run "$t" redis; done
  for t in "$A" "$B"; do run "$t" embedded; done
done
kill $RPID $CPID; rm -f "$BODIES"
