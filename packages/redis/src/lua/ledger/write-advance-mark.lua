-- Writes a ledger entry and moves a resource's mark on in the same step, unless the mark there
-- is newer (after entry-write.lua: its KEYS[1-5] and ARGV[1-10]). The mark is indexed by its
-- horizon, for purge.
-- KEYS[6]  the resource's mark (a hash: `v` version, `m` JSON, `at`, `rank`, `by`)
-- KEYS[7]  index of marks by horizon
-- ARGV[11] the mark as JSON
-- ARGV[12] its time (ms)
-- ARGV[13] its rank among changes at that time
-- ARGV[14] the delivery that sets it
-- ARGV[15] its horizon (ms)
-- ARGV[16] the resource id
-- Returns  the new version, 0 refused
local nv = write_entry()
if nv == 0 then return 0 end
local f = redis.call('HMGET', KEYS[6], 'v', 'at', 'rank', 'by')
local at, rank = tonumber(ARGV[12]), tonumber(ARGV[13])
if (not f[1]) or f[4] == ARGV[14] or tonumber(f[2]) < at or (tonumber(f[2]) == at and tonumber(f[3]) <= rank) then
  redis.call('HINCRBY', KEYS[6], 'v', 1)
  redis.call('HSET', KEYS[6], 'm', ARGV[11], 'at', ARGV[12], 'rank', ARGV[13], 'by', ARGV[14])
  redis.call('ZADD', KEYS[7], ARGV[15], ARGV[16])
end
return nv
