-- Record that a worker's consumer is alive, scored by Redis's own clock (not the worker
-- host's), and prune entries silent for longer than ARGV[2] ms.
-- KEYS[1]: the workers sorted set. ARGV[1]: the consumer name; ARGV[2]: prune age (ms).
-- Returns Redis's time in unix ms (the worker derives its clock offset from it).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now - tonumber(ARGV[2]))
return now
