-- The part every ledger write shares: `write_entry()` writes an entry (a hash: `v` version,
-- `e` the entry as JSON without its body, `b` body, `x` body expiry, `s` status, `t` type, `r`
-- first recorded, `a` account, `c` body capped) by compare-and-set, and its indexes. A body is
-- kept from the first write only (later writes keep or drop it), and only while the account
-- keeps fewer unexpired ones than the most (else the entry is marked `c`).
-- KEYS[1]  the entry
-- KEYS[2]  index of entries by first recording
-- KEYS[3]  index of bodies by expiry
-- KEYS[4]  the account's index of entries
-- KEYS[5]  the account's kept bodies
-- ARGV[1]  entry JSON, without its body
-- ARGV[2]  expected version ('' for none: a new entry)
-- ARGV[3]  received at (ms)
-- ARGV[4]  delivery id
-- ARGV[5]  body ('' for none)
-- ARGV[6]  body expiry (ms; '' with no body)
-- ARGV[7]  status
-- ARGV[8]  event type
-- ARGV[9]  account ('' for none)
-- ARGV[10] the most unexpired bodies an account keeps
-- Returns  (from write_entry) the new version, 0 refused
local function write_entry()
  local v = redis.call('HGET', KEYS[1], 'v')
  if ARGV[2] == '' then
    if v then return 0 end
  elseif v ~= ARGV[2] then
    return 0
  end
  local nv = redis.call('HINCRBY', KEYS[1], 'v', 1)
  redis.call('HSET', KEYS[1], 'e', ARGV[1], 's', ARGV[7], 't', ARGV[8], 'r', ARGV[3], 'a', ARGV[9])
  if ARGV[5] == '' then
    redis.call('HDEL', KEYS[1], 'b', 'x')
    redis.call('ZREM', KEYS[3], ARGV[4])
    if ARGV[9] ~= '' then redis.call('ZREM', KEYS[5], ARGV[4]) end
  elseif ARGV[2] == '' then
    local keep = true
    if ARGV[9] ~= '' then
      redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', ARGV[3])
      keep = redis.call('ZCARD', KEYS[5]) < tonumber(ARGV[10])
    end
    if keep then
      redis.call('HSET', KEYS[1], 'b', ARGV[5], 'x', ARGV[6])
      redis.call('ZADD', KEYS[3], ARGV[6], ARGV[4])
      if ARGV[9] ~= '' then redis.call('ZADD', KEYS[5], ARGV[6], ARGV[4]) end
    else
      redis.call('HSET', KEYS[1], 'c', '1')
    end
  end
  if ARGV[2] == '' then
    redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
    if ARGV[9] ~= '' then redis.call('ZADD', KEYS[4], ARGV[3], ARGV[4]) end
  end
  return nv
end
