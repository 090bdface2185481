-- admission.lua: the limit checks shared by admit.lua and admit_enqueue.lua (included, never run alone).
--
-- KEYS[1] request window of the client   (sorted set: member = lease id, score = admit time, ms)
-- KEYS[2] semantic window of the client  (same shape; touched only when ARGV[3] == "1")
-- KEYS[3] the client's concurrency leases (sorted set: member = lease id, score = lease expiry, ms)
-- KEYS[4] the global concurrency leases   (same shape)
-- ARGV[1] request limit per window        (count)
-- ARGV[2] semantic limit per window       (count)
-- ARGV[3] "1" if the request is a semantic or hybrid search, else "0"
-- ARGV[4] concurrent requests per client  (count)
-- ARGV[5] concurrent requests in all      (count)
-- ARGV[6] lease time-to-live              (ms; the call deadline plus a margin)
-- ARGV[7] lease id                        (unique string)
-- ARGV[8] window length                   (ms; 60000)
--
-- Time is the Redis server's (TIME), so every gateway on every host shares one clock.
-- A refusal is one integer, kind * 100 + Retry-After seconds (1..60), with kind
-- 1 = global, 2 = requests, 3 = semantic, 4 = concurrency (5 = backlog full, admit_enqueue.lua);
-- 0 means admitted. One integer is the cheapest reply for a gateway to read.

local function admission_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function window_retry_after(key, now, window)
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if oldest[2] == nil then
    return 1
  end
  local wait_ms = tonumber(oldest[2]) + window - now
  return math.max(1, math.min(math.floor(window / 1000), math.ceil(wait_ms / 1000)))
end

-- Whether the sorted set at key holds limit entries scored above cutoff. A set smaller than
-- the limit cannot hold that many, so its stale entries (expired leases, requests older than
-- the window) are purged only once its size reaches the limit: most requests pay one ZCARD
-- per set, and no set grows past its limit (an entry is added only below it).
local function at_limit(key, cutoff, limit)
  if redis.call('ZCARD', key) < limit then
    return false
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', cutoff)
  return redis.call('ZCARD', key) >= limit
end

-- 0 when every limit has room, else the refusal code; writes nothing but purges of stale entries.
local function admission_check(now)
  local window = tonumber(ARGV[8])
  -- Leases of dead gateways expire: at_limit counts only live ones.
  if at_limit(KEYS[4], now, tonumber(ARGV[5])) then
    return 101
  end
  if at_limit(KEYS[1], now - window, tonumber(ARGV[1])) then
    return 200 + window_retry_after(KEYS[1], now, window)
  end
  if ARGV[3] == "1" and at_limit(KEYS[2], now - window, tonumber(ARGV[2])) then
    return 300 + window_retry_after(KEYS[2], now, window)
  end
  if at_limit(KEYS[3], now, tonumber(ARGV[4])) then
    return 401
  end
  return 0
end

-- Every entry of a key is added with the same time-to-live, so the newest one decides
-- when the key may go: setting the expiry on each add is enough.
local function admission_add(key, score, ttl)
  redis.call('ZADD', key, score, ARGV[7])
  redis.call('PEXPIRE', key, ttl)
end

-- Record an admitted request: its windows, and its concurrency leases when take_lease.
local function admission_record(now, take_lease)
  local window = tonumber(ARGV[8])
  local lease_ttl = tonumber(ARGV[6])
  admission_add(KEYS[1], now, window)
  if ARGV[3] == "1" then
    admission_add(KEYS[2], now, window)
  end
  if take_lease then
    admission_add(KEYS[3], now + lease_ttl, lease_ttl)
    admission_add(KEYS[4], now + lease_ttl, lease_ttl)
  end
end
