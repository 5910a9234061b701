-- Takes the held tries of a task that are due, the earliest first, under a lease.
-- KEYS[1]  the task's tries: a sorted set, each account key as stored, scored by its time
-- KEYS[2]  the task's failures in a row: a hash, by account key as stored
-- ARGV[1]  now, in ms
-- ARGV[2]  the most to take
-- ARGV[3]  when a taken try comes due again if its taker holds no next one, in ms
-- Returns  key, failures, key, failures, ...
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local taken = {}
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[3], member)
  taken[#taken + 1] = member
  taken[#taken + 1] = redis.call('HGET', KEYS[2], member) or ''
end
return taken
