-- entry.lua: the calls stream entry's field/value list (included by enqueue.lua and admit_enqueue.lua).
--
-- The caller sends the values only, from ARGV[first] on: rid, reply, call, lease, dl. The
-- script names the fields (the names workers read, queue.py), so each call's EVALSHA carries
-- five arguments fewer; an empty lease or dl is left out of the entry.

local function entry_fields(first)
  local fields = {'rid', ARGV[first], 'reply', ARGV[first + 1], 'call', ARGV[first + 2]}
  if ARGV[first + 3] ~= '' then
    fields[#fields + 1] = 'lease'
    fields[#fields + 1] = ARGV[first + 3]
  end
  if ARGV[first + 4] ~= '' then
    fields[#fields + 1] = 'dl'
    fields[#fields + 1] = ARGV[first + 4]
  end
  return fields
end
