-- Deletes an account's subscription record at a version, keeping only the version for a while.
-- KEYS[1]  the record
-- ARGV[1]  expected version
-- ARGV[2]  how long the version is kept, ms
-- Returns  0 refused, else the ids it listed (JSON)
local r = redis.call('HGET', KEYS[1], 'r')
if (not r) or redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
local old = redis.call('HGET', KEYS[1], 'i') or '[]'
redis.call('HDEL', KEYS[1], 'r', 'i', 'k')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return old
