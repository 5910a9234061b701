-- Drops the entries first recorded before a bound, with their bodies and index entries, at most
-- 500 a call.
-- KEYS[1]  index of entries by first recording
-- KEYS[2]  index of bodies by expiry
-- ARGV[1]  entry key prefix (an entry's key is the prefix and its delivery id)
-- ARGV[2]  account index prefix (the prefix and the account)
-- ARGV[3]  kept-bodies prefix (the prefix and the account)
-- ARGV[4]  the bound (ms)
-- Returns  { dropped, looked at }
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[4], 'LIMIT', 0, 500)
for _, id in ipairs(ids) do
  local key = ARGV[1] .. id
  local account = redis.call('HGET', key, 'a')
  redis.call('DEL', key)
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  if account and account ~= '' then
    redis.call('ZREM', ARGV[2] .. account, id)
    redis.call('ZREM', ARGV[3] .. account, id)
  end
end
return {#ids, #ids}
