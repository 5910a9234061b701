-- Deletes a key while it holds a value: a lease released by its owner only, an index entry
-- removed by its record only.
-- KEYS[1]  the key
-- ARGV[1]  the value it must hold
-- Returns  0
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
