-- Record that a worker's consumer is alive, scored by Redis's own clock (not the worker
-- host's), with its thread count; prune entries silent for longer than ARGV[2] ms.
-- KEYS[1]: the workers sorted set; KEYS[2]: the consumer -> threads hash.
-- ARGV[1]: the consumer name; ARGV[2]: prune age (ms); ARGV[3]: its threads.
-- Returns Redis's time in unix ms (the worker derives its clock offset from it).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local old = redis.call('ZRANGEBYSCORE', KEYS[1], 0, now - tonumber(ARGV[2]))
for _, member in ipairs(old) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('HDEL', KEYS[2], member)
end
return now
