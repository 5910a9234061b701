-- Drops the bodies that expire up to a bound (after body-drop.lua), at most 500 a call.
-- KEYS[1]  index of bodies by expiry
-- ARGV[1]  entry key prefix
-- ARGV[2]  kept-bodies prefix (the prefix and the account)
-- ARGV[3]  the bound (ms)
-- Returns  { dropped, looked at }
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[3], 'LIMIT', 0, 500)
local dropped = 0
for _, id in ipairs(ids) do dropped = dropped + drop_body(KEYS[1], id) end
return {dropped, #ids}
