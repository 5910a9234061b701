-- Moves a sweep shard's checkpoint, by compare-and-set on its version.
-- KEYS[1]  the checkpoint's hash (`through`, `version`)
-- ARGV[1]  the time through which the shard was checked, in ms
-- ARGV[2]  the version the writer read ('' when it read none)
-- Returns  the new version, or nil when another write got there first
-- A checkpoint whose time or version is not a number (a whole one of at least 1, for the
-- version) is read as none (`RedisSweepStore.checkpoint`), so a writer that read none may
-- replace it: a hostile write cannot stop its shard.
local fields = redis.call('HMGET', KEYS[1], 'through', 'version')
local through, version = tonumber(fields[1]), tonumber(fields[2])
local function finite(x) return x ~= nil and x == x and x ~= math.huge and x ~= -math.huge end
local sane = finite(through) and finite(version) and version >= 1 and version == math.floor(version)
local read = sane and fields[2] or ''
if read ~= ARGV[2] then return nil end
local next = (sane and version or 0) + 1
redis.call('HSET', KEYS[1], 'through', ARGV[1], 'version', next)
return next
