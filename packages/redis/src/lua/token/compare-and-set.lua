-- Writes a token record by compare-and-set on its version.
-- KEYS[1]  the record
-- ARGV[1]  the record as JSON
-- ARGV[2]  expected version ('' for none: no record may be there)
-- Returns  1 written, 0 refused
local r = redis.call('HGET', KEYS[1], 'r')
if ARGV[2] == '' then
  if r then return 0 end
elseif (not r) or redis.call('HGET', KEYS[1], 'v') ~= ARGV[2] then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('HSET', KEYS[1], 'r', ARGV[1])
redis.call('PERSIST', KEYS[1])
return 1
