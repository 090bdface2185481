-- The consumers whose last heartbeat is at most ARGV[1] ms old by Redis's own clock.
-- KEYS[1]: the workers sorted set; KEYS[2]: the consumer -> threads hash.
-- ARGV[1]: the liveness window (ms).
-- Returns {redis time in unix ms, the live consumers' threads summed, the consumers registered
-- at all (live or not; 0 after Redis lost its data), member, member, ...}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEYS[1], now - tonumber(ARGV[1]), '+inf')
local threads = 0
for _, member in ipairs(live) do
  threads = threads + (tonumber(redis.call('HGET', KEYS[2], member)) or 0)
end
table.insert(live, 1, redis.call('ZCARD', KEYS[1]))
table.insert(live, 1, threads)
table.insert(live, 1, now)
return live
