-- admit_enqueue.lua: admit one tool call and append it to the calls stream in one step.
--
-- One round trip instead of two (admit.lua, then enqueue.lua) for a call that runs on
-- a worker. The outcome is the one the two scripts would give in turn:
--
-- KEYS[1..4], ARGV[1..8]: as admission.lua; the call always takes concurrency leases.
-- KEYS[5] the calls stream
-- ARGV[9]  maximum backlog (entries in the stream, XLEN)
-- ARGV[10..14] the stream entry's values (rid, reply, call, lease, dl; an empty lease or dl is left out):
--          the script names the fields, so the call carries five arguments fewer
--
-- Returns the new entry id when admitted and queued; an admission refusal code (admission.lua, nothing
-- written); or 501 when the backlog is full: the request is then counted in its windows,
-- as an admitted request is, but takes no lease and is not queued.
--!include admission.lua
--!include entry.lua

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
return redis.call('XADD', KEYS[5], '*', unpack(entry_fields(10)))
