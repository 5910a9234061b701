-- Releases a claim its owner holds, so a retry runs the handlers again.
-- KEYS[1]  the delivery's key
-- ARGV[1]  owner
-- Returns  0
if redis.call('GET', KEYS[1]) == 'c:' .. ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
