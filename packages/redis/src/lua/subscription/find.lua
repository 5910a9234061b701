-- Looks a delivery's webhook up in one round trip: the index entry names the record's Redis key,
-- read here too. That key is not in KEYS: fine on one server, not on a Cluster (another slot),
-- where the caller makes two round trips instead.
-- KEYS[1]  the webhook id's index entry
-- Returns  nil, or { account key, the record's version, the record }
local entry = redis.call('GET', KEYS[1])
if not entry then return nil end
local names = cjson.decode(entry)
local record = redis.call('HMGET', names[2], 'v', 'r')
return {names[1], record[1], record[2]}
