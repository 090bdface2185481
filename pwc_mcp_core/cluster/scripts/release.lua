-- release.lua: give back one request's concurrency leases (idempotent).
--
-- KEYS[1] the client's concurrency leases (sorted set scored by lease expiry, ms)
-- KEYS[2] the global concurrency leases   (same shape)
-- ARGV[1] lease id taken by admit.lua
--
-- Returns the number of leases removed (0, 1 or 2). The request windows are left
-- alone: an admitted request keeps counting for its full 60 s.

local removed = redis.call('ZREM', KEYS[1], ARGV[1])
removed = removed + redis.call('ZREM', KEYS[2], ARGV[1])
return removed
