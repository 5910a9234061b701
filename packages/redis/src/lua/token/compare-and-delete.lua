-- Deletes a token record at a version, as delete.lua does.
-- KEYS[1]  the record
-- KEYS[2]  its lease
-- ARGV[1]  expected version
-- ARGV[2]  how long the version is kept, ms
-- Returns  1 deleted, 0 refused
local r = redis.call('HGET', KEYS[1], 'r')
if (not r) or redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'r')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[2])
return 1
