-- Claims a delivery's key: `c:<owner>` with the lease as its expiry.
-- KEYS[1]  the delivery's key
-- ARGV[1]  owner
-- ARGV[2]  lease, ms
-- Returns  'claimed', 'completed' (`d:<owner>` there) or 'in_progress' (another claim)
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], 'c:' .. ARGV[1], 'PX', ARGV[2])
  return 'claimed'
end
if string.sub(v, 1, 2) == 'd:' then return 'completed' end
return 'in_progress'
