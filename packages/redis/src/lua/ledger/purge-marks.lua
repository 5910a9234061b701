-- Drops the marks whose horizon is before a bound, at most 500 a call.
-- KEYS[1]  index of marks by horizon
-- ARGV[1]  mark key prefix (a mark's key is the prefix and its resource id)
-- ARGV[2]  the bound (ms)
-- Returns  { dropped, looked at }
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2], 'LIMIT', 0, 500)
for _, id in ipairs(ids) do
  redis.call('DEL', ARGV[1] .. id)
  redis.call('ZREM', KEYS[1], id)
end
return {#ids, #ids}
