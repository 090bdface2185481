-- sse_renew.lua: a live holder extends its open HTTP+SSE sessions (one call per renewal tick).
--
-- KEYS[1] every open session (sorted set of session ids scored by expiry, ms)
-- KEYS[2..] for each session, its client's open sessions then its record, in pairs
-- ARGV[1] session time-to-live, ms
-- ARGV[2] the Redis client id of the holder's inbox connection ("" when not known): a
--         reconnected inbox names its new connection in every record it renews
-- ARGV[3..] the session ids, in the order of the KEYS pairs
--
-- Returns the ids of the sessions whose record is gone (expired while the holder was
-- stalled, or Redis lost it): they are not brought back, the holder ends their streams.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local gone = {}
for i = 3, #ARGV do
  local client_key, record_key = KEYS[2 * i - 4], KEYS[2 * i - 3]
  if redis.call('PEXPIRE', record_key, ttl) == 1 then
    if ARGV[2] ~= '' then
      redis.call('HSET', record_key, 'conn', ARGV[2])
    end
    redis.call('ZADD', KEYS[1], now + ttl, ARGV[i])
    redis.call('ZADD', client_key, now + ttl, ARGV[i])
    redis.call('PEXPIRE', client_key, ttl)
  else
    gone[#gone + 1] = ARGV[i]
  end
end
return gone
