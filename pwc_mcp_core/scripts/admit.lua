-- admit.lua: atomically admit one request against every limit, or reject it unrecorded.
--
-- KEYS[1] request window of the client   (sorted set: member = lease id, score = admit time, ms)
-- KEYS[2] semantic window of the client  (same shape; touched only when ARGV[3] == "1")
-- KEYS[3] the client's concurrency leases (sorted set: member = lease id, score = lease expiry, ms)
-- KEYS[4] the global concurrency leases   (same shape)
-- ARGV[1] request limit per window        (count)
-- ARGV[2] semantic limit per window       (count)
-- ARGV[3] "1" if the request is a semantic or hybrid search, else "0"
-- ARGV[4] concurrent requests per client  (count)
-- ARGV[5] concurrent requests in all      (count)
-- ARGV[6] lease time-to-live              (ms; the call deadline plus a margin)
-- ARGV[7] lease id                        (unique string)
-- ARGV[8] window length                   (ms; 60000)
-- ARGV[9] "1" to take concurrency leases (calls that run on a worker), "0" to only check
--         them (methods the gateway answers at once hold no slot while they run)
--
-- Time is the Redis server's (TIME), so every gateway on every host shares one clock.
-- Returns {allowed (1|0), kind, retry_after_s}; kind is "ok", "global", "requests",
-- "semantic" or "concurrency". Nothing is written when the request is rejected.

local request_limit = tonumber(ARGV[1])
local semantic_limit = tonumber(ARGV[2])
local is_semantic = ARGV[3] == "1"
local client_limit = tonumber(ARGV[4])
local global_limit = tonumber(ARGV[5])
local lease_ttl = tonumber(ARGV[6])
local lease_id = ARGV[7]
local window = tonumber(ARGV[8])
local take_lease = ARGV[9] ~= "0"

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- Leases of dead gateways expire; purge them before counting.
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[4]) >= global_limit then
  return {0, 'global', 1}
end

local function retry_after(key)
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if oldest[2] == nil then
    return 1
  end
  local wait_ms = tonumber(oldest[2]) + window - now
  return math.max(1, math.min(math.floor(window / 1000), math.ceil(wait_ms / 1000)))
end

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= request_limit then
  return {0, 'requests', retry_after(KEYS[1])}
end
if is_semantic then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
  if redis.call('ZCARD', KEYS[2]) >= semantic_limit then
    return {0, 'semantic', retry_after(KEYS[2])}
  end
end
if redis.call('ZCARD', KEYS[3]) >= client_limit then
  return {0, 'concurrency', 1}
end

local function record(key, score, ttl)
  redis.call('ZADD', key, score, lease_id)
  if redis.call('PTTL', key) < ttl then
    redis.call('PEXPIRE', key, ttl)
  end
end

record(KEYS[1], now, window)
if is_semantic then
  record(KEYS[2], now, window)
end
if take_lease then
  record(KEYS[3], now + lease_ttl, lease_ttl)
  record(KEYS[4], now + lease_ttl, lease_ttl)
end
return {1, 'ok', 0}
