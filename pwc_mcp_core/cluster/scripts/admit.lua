-- admit.lua: atomically admit one request against every limit, or refuse it unrecorded.
--
-- KEYS[1..4], ARGV[1..8] and the reply: see admission.lua.
-- ARGV[9] "1" to take concurrency leases (calls that run on a worker), "0" to only check
--         them (methods the gateway answers at once hold no slot while they run)
--
-- Nothing is written when the request is refused.
--!include admission.lua

local now = admission_now()
local refused = admission_check(now)
if refused ~= 0 then
  return refused
end
admission_record(now, ARGV[9] ~= "0")
return 0
