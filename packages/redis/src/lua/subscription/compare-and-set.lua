-- Writes an account's subscription record (a hash: `r` the record, `v` its version, `i` its
-- webhook ids as JSON, `k` the account key) by compare-and-set.
-- KEYS[1]  the record
-- ARGV[1]  the record as JSON
-- ARGV[2]  expected version ('' for none: the record must not exist)
-- ARGV[3]  its webhook ids as JSON
-- ARGV[4]  the account key
-- Returns  0 refused, else the ids it listed before (JSON), for the caller to unindex
local r = redis.call('HGET', KEYS[1], 'r')
if ARGV[2] == '' then
  if r then return 0 end
elseif (not r) or redis.call('HGET', KEYS[1], 'v') ~= ARGV[2] then
  return 0
end
local old = redis.call('HGET', KEYS[1], 'i') or '[]'
redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('HSET', KEYS[1], 'r', ARGV[1], 'i', ARGV[3], 'k', ARGV[4])
redis.call('PERSIST', KEYS[1])
return old
