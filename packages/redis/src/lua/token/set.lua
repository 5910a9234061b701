-- Writes a token record (a hash: `r` the record, `v` its version) whatever was there.
-- KEYS[1]  the record
-- ARGV[1]  the record as JSON
-- Returns  1
redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('HSET', KEYS[1], 'r', ARGV[1])
redis.call('PERSIST', KEYS[1])
return 1
