-- cache_renew.lua: extend the single-flight cache locks this process still holds.
--
-- KEYS[1..n]   lock keys (keys.cache_lock(digest))
-- ARGV[1..n]   the token stored with each lock
-- ARGV[n + 1]  the new time to live, milliseconds
--
-- A lock whose token differs (it expired and another process took it) is left
-- alone. Returns how many locks were extended.

local ttl = ARGV[#KEYS + 1]
local renewed = 0
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i] then
    redis.call('PEXPIRE', key, ttl)
    renewed = renewed + 1
  end
end
return renewed
