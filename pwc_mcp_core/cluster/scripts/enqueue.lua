-- Append one tool call to the calls stream unless the backlog is full.
-- KEYS[1]: the calls stream.
-- ARGV[1]: maximum backlog (entries not yet read by any worker, counted as XLEN);
-- ARGV[2..]: field/value pairs of the entry.
-- Returns the new entry id, or false when the backlog is full (backpressure).
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[1]) then
  return false
end
local fields = {}
for i = 2, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
return redis.call('XADD', KEYS[1], '*', unpack(fields))
