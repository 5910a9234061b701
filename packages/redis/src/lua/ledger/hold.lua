-- Takes, renews or releases a resource's hold (a hash: `o` owner, `u` until): taken when free,
-- lapsed or the owner's own; released only by its owner. Expires by itself a minute after `u`.
-- KEYS[1]  the hold
-- ARGV[1]  owner
-- ARGV[2]  until (ms; 0 releases)
-- ARGV[3]  now (ms)
-- Returns  1 done, 0 another owner holds it
local o = redis.call('HGET', KEYS[1], 'o')
if ARGV[2] == '0' then
  if o == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
  return 0
end
if o and o ~= ARGV[1] and tonumber(redis.call('HGET', KEYS[1], 'u') or '0') > tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'u', ARGV[2])
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[2]) - tonumber(ARGV[3]), 0) + 60000)
return 1
