-- Renews a claim its owner holds.
-- KEYS[1]  the delivery's key
-- ARGV[1]  owner
-- ARGV[2]  lease, ms
-- Returns  1 renewed, 0 not this owner's claim
if redis.call('GET', KEYS[1]) == 'c:' .. ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
