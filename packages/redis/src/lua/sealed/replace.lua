-- Replaces a record's sealed field `r` only while it still holds what a sweep read, keeping the
-- version: a writer that read the record before still finds the version it expects.
-- KEYS[1]  the record (a hash)
-- ARGV[1]  `r` as read
-- ARGV[2]  `r` sealed again
-- Returns  1 replaced, 0 changed meanwhile
if redis.call('HGET', KEYS[1], 'r') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'r', ARGV[2])
return 1
