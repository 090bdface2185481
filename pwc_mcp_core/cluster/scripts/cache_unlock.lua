-- cache_unlock.lua: release a single-flight cache lock only if we still hold it.
--
-- KEYS[1] the lock key (keys.cache_lock(digest))
-- ARGV[1] the random token the holder stored with SET NX PX
--
-- Returns 1 when the lock was ours and is now gone, 0 otherwise (it expired and
-- another process may hold it: never delete someone else's lock).

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
