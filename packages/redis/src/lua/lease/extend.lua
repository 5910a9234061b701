-- Extends a lease its owner holds (taken with SET NX PX first, outside any script).
-- KEYS[1]  the lease
-- ARGV[1]  owner
-- ARGV[2]  new time to live, ms
-- Returns  1 extended, 0 not this owner's
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
