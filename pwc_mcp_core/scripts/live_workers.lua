-- The consumers whose last heartbeat is at most ARGV[1] ms old by Redis's own clock.
-- KEYS[1]: the workers sorted set. ARGV[1]: the liveness window (ms).
-- Returns {redis time in unix ms, member, member, ...}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEYS[1], now - tonumber(ARGV[1]), '+inf')
table.insert(live, 1, now)
return live
