-- finish.lua: a worker finishes one call: its reply, its lease back, the entry acknowledged and deleted.
--
-- One command instead of six (LPUSH, EXPIRE, ZREM, ZREM, XACK, XDEL), so the worker packs
-- and reads one reply, not six; run atomically, the entry is never acknowledged without its reply.
--
-- KEYS[1] the calls stream
-- KEYS[2] the gateway's reply list
-- KEYS[3], KEYS[4] (optional) the client's and the global concurrency leases
-- ARGV[1] the consumer group
-- ARGV[2] the entry id
-- ARGV[3] the reply item ("" when the caller is gone: no reply)
-- ARGV[4] the reply list's time-to-live (s)
-- ARGV[5] the lease id (with KEYS[3] and KEYS[4]; idempotent: the gateway may release it too)
--
-- Returns 1. A refused command (a reply list of the wrong type) raises, and what follows it
-- is not done: the entry stays pending and the worker finishes it again.
if ARGV[3] ~= '' then
  redis.call('LPUSH', KEYS[2], ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[4])
end
if KEYS[4] then
  redis.call('ZREM', KEYS[3], ARGV[5])
  redis.call('ZREM', KEYS[4], ARGV[5])
end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return 1
