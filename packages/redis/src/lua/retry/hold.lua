-- Holds an account's next try of a task (replacing what was held).
-- KEYS[1]  the task's tries (sorted set); KEYS[2]  its failures in a row (hash)
-- ARGV[1]  the account key as stored; ARGV[2]  the try's time, in ms; ARGV[3]  the failures
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
