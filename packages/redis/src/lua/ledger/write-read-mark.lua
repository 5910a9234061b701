-- Writes a ledger entry and reads a resource's mark in the same step (after entry-write.lua: its
-- KEYS[1-5] and ARGV[1-10]).
-- KEYS[6]  the resource's mark (a hash: `v` version, `m` the mark as JSON)
-- Returns  0 refused, else { new version, the mark's version or '', the mark or '' }
local nv = write_entry()
if nv == 0 then return 0 end
local m = redis.call('HMGET', KEYS[6], 'v', 'm')
return {nv, m[1] or '', m[2] or ''}
