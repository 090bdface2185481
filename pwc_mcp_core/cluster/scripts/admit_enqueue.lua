-- admit_enqueue.lua: admit one tool call and append it to the calls stream in one step.
--
-- One round trip instead of two (admit.lua, then enqueue.lua) for a call that runs on
-- a worker. The outcome is the one the two scripts would give in turn:
--
-- KEYS[1..4], ARGV[1..8]: as admission.lua; the call always takes concurrency leases.
-- KEYS[5] the calls stream
-- ARGV[9]  maximum backlog (entries in the stream, XLEN)
-- ARGV[10..] field/value pairs of the stream entry
--
-- Returns the new entry id when admitted and queued; an admission refusal code (admission.lua, nothing
-- written); or 501 when the backlog is full: the request is then counted in its windows,
-- as an admitted request is, but takes no lease and is not queued.
--!include admission.lua

local now = admission_now()
local refused = admission_check(now)
if refused ~= 0 then
  return refused
end
if redis.call('XLEN', KEYS[5]) >= tonumber(ARGV[9]) then
  admission_record(now, false)
  return 501
end
admission_record(now, true)
local fields = {}
for i = 10, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
return redis.call('XADD', KEYS[5], '*', unpack(fields))
