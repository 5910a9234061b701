-- Drops the bodies that expire up to a bound (the entries stay, their version moved on), at
-- most 500 a call.
-- KEYS[1]  index of bodies by expiry
-- ARGV[1]  entry key prefix
-- ARGV[2]  kept-bodies prefix (the prefix and the account)
-- ARGV[3]  the bound (ms)
-- Returns  { dropped, looked at }
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[3], 'LIMIT', 0, 500)
local dropped = 0
for _, id in ipairs(ids) do
  local key = ARGV[1] .. id
  if redis.call('HEXISTS', key, 'b') == 1 then
    local account = redis.call('HGET', key, 'a')
    if account and account ~= '' then redis.call('ZREM', ARGV[2] .. account, id) end
    redis.call('HDEL', key, 'b', 'x')
    redis.call('HINCRBY', key, 'v', 1)
    dropped = dropped + 1
  end
  redis.call('ZREM', KEYS[1], id)
end
return {dropped, #ids}
