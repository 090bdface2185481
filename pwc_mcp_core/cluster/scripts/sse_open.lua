-- sse_open.lua: open one HTTP+SSE session if both stream caps have room (atomic).
--
-- KEYS[1] the client's open sessions (sorted set of session ids scored by expiry, ms)
-- KEYS[2] every open session         (same shape)
-- KEYS[3] the session's record (hash: holder, client)
-- ARGV[1] session id
-- ARGV[2] per-client cap
-- ARGV[3] global cap
-- ARGV[4] session time-to-live, ms (the holder renews it)
-- ARGV[5] holder id (the gateway process holding the stream)
-- ARGV[6] client identity hash
-- ARGV[7] the Redis client id of the holder's inbox connection ("" when not known yet)
--
-- Returns 0 when opened, 1 when the global cap refused, 2 when the client's cap refused.
-- Expired entries (a dead holder's sessions) are dropped first, so they free their slots.
-- Time is the Redis server's (TIME), so every gateway on every host shares one clock.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
  return 1
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 2
end
local ttl = tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('HSET', KEYS[3], 'holder', ARGV[5], 'client', ARGV[6], 'conn', ARGV[7])
redis.call('PEXPIRE', KEYS[3], ttl)
return 0
