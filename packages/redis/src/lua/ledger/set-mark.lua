-- Writes a resource's mark by compare-and-set, indexed by its horizon.
-- KEYS[1]  the mark (a hash: `v` version, `m` JSON, `at`, `rank`, `by`)
-- KEYS[2]  index of marks by horizon
-- ARGV[1]  expected version ('' for none)
-- ARGV[2]  the mark as JSON
-- ARGV[3]  its time (ms)
-- ARGV[4]  its rank
-- ARGV[5]  the delivery that sets it
-- ARGV[6]  its horizon (ms)
-- ARGV[7]  the resource id
-- Returns  the new version, 0 refused
local v = redis.call('HGET', KEYS[1], 'v')
if ARGV[1] == '' then
  if v then return 0 end
elseif v ~= ARGV[1] then
  return 0
end
local nv = redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('HSET', KEYS[1], 'm', ARGV[2], 'at', ARGV[3], 'rank', ARGV[4], 'by', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[7])
return nv
