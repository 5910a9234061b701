-- The part the body purges share: `drop_body(bodies, id)` drops an entry's body (the entry stays, its
-- version moved on; the account's kept-bodies index forgets it) and takes it off the index of
-- bodies by expiry (`bodies`, the key the calling script was given).
-- ARGV[1]  entry key prefix (an entry's key is the prefix and its delivery id)
-- ARGV[2]  kept-bodies prefix (the prefix and the account)
-- Returns  (from drop_body) 1 when there was a body, else 0
local function drop_body(bodies, id)
  local key = ARGV[1] .. id
  local dropped = 0
  if redis.call('HEXISTS', key, 'b') == 1 then
    local account = redis.call('HGET', key, 'a')
    if account and account ~= '' then redis.call('ZREM', ARGV[2] .. account, id) end
    redis.call('HDEL', key, 'b', 'x')
    redis.call('HINCRBY', key, 'v', 1)
    dropped = 1
  end
  redis.call('ZREM', bodies, id)
  return dropped
end
