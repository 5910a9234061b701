-- Drops an account's held try of a task.
-- KEYS[1]  the task's tries (sorted set); KEYS[2]  its failures in a row (hash)
-- ARGV[1]  the account key as stored
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
