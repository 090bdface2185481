-- Append one tool call to the calls stream unless the backlog is full.
-- KEYS[1]: the calls stream.
-- ARGV[1]: maximum backlog (entries not yet read by any worker, counted as XLEN);
-- ARGV[2..6]: the entry's values (rid, reply, call, lease, dl; an empty lease or dl is left out).
-- Returns the new entry id, or false when the backlog is full (backpressure).
--!include entry.lua
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[1]) then
  return false
end
return redis.call('XADD', KEYS[1], '*', unpack(entry_fields(2)))
