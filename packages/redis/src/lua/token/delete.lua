-- Deletes a token record, keeping its version for a while (a compare-and-set from a read made
-- before cannot succeed afterwards), and its refresh lease.
-- KEYS[1]  the record
-- KEYS[2]  its lease
-- ARGV[1]  how long the version is kept, ms
-- Returns  0
redis.call('HDEL', KEYS[1], 'r')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 0
