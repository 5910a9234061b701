-- A 429 lowers a shared rate, as core's `throttleTurns` computes it: halved (not under the
-- floor), paused for its Retry-After (at most five minutes), the last turn kept.
-- KEYS[1]  the rate's hash (see reserve.lua)
-- ARGV     ceiling, floor, now, retryAfterMs ('' when none), the longest pause in ms
local ceiling, floor, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local retry, longest = tonumber(ARGV[4]) or 0, tonumber(ARGV[5])
local fields = redis.call('HMGET', KEYS[1], 'ps', 'pu')
local ps, pu = tonumber(fields[1]), tonumber(fields[2])
-- Checked as reserve.lua checks them: a rate off its limits, or a pause that is not a number
-- or past the longest, counts as absent.
local function finite(x) return x ~= nil and x == x and x ~= math.huge and x ~= -math.huge end
if not finite(ps) or ps < floor or ps > ceiling then ps, pu = ceiling, now end
if not finite(pu) or pu > now + longest then pu = now end
local function exact(x) return string.format('%.17g', x) end
redis.call('HSET', KEYS[1], 'ps', exact(math.max(floor, ps / 2)), 'mv', exact(now),
  'pu', exact(math.max(pu, now + math.min(longest, math.max(0, retry)))))
return 1
