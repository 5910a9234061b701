-- Completes a claim: `d:<owner>`, remembered for a while; also when the claim lapsed and no one
-- took it since.
-- KEYS[1]  the delivery's key
-- ARGV[1]  owner
-- ARGV[2]  how long the completion is remembered, ms
-- Returns  0
local v = redis.call('GET', KEYS[1])
if (not v) or v == 'c:' .. ARGV[1] then
  redis.call('SET', KEYS[1], 'd:' .. ARGV[1], 'PX', ARGV[2])
end
return 0
