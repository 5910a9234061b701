-- Drops the bodies of an account's entries (after body-drop.lua), walking its index by offset
-- (the index stays: it lists the entries), 500 a call.
-- KEYS[1]  the account's index of entries
-- KEYS[2]  index of bodies by expiry
-- ARGV[1]  entry key prefix
-- ARGV[2]  kept-bodies prefix (the prefix and the account)
-- ARGV[3]  offset in the account's index
-- Returns  { dropped, looked at }
local ids = redis.call('ZRANGE', KEYS[1], tonumber(ARGV[3]), tonumber(ARGV[3]) + 499)
local dropped = 0
for _, id in ipairs(ids) do dropped = dropped + drop_body(KEYS[2], id) end
return {dropped, #ids}
