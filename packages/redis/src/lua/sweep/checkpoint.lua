-- Moves a sweep shard's checkpoint, by compare-and-set on its version.
-- KEYS[1]  the checkpoint's hash (`through`, `version`)
-- ARGV[1]  the time through which the shard was checked, in ms
-- ARGV[2]  the version the writer read ('' when it read none)
-- Returns  the new version, or nil when another write got there first
local version = redis.call('HGET', KEYS[1], 'version')
if (version or '') ~= ARGV[2] then return nil end
local next = (tonumber(version) or 0) + 1
redis.call('HSET', KEYS[1], 'through', ARGV[1], 'version', next)
return next
