-- Takes the next turn of a shared rate, as core's `reserveTurn` computes it: the rate raised a
-- tenth of its ceiling for each `raiseEveryMs` since it last moved, the turn spaced after the
-- last one given, not before now nor in a pause.
-- KEYS[1]  the rate's hash (`ps` requests a second, `mv` when it moved, `pu` paused until,
--          `la` the last turn; times in ms)
-- ARGV     ceiling, raiseEveryMs, now, floor, the longest pause in ms
-- Returns  { the turn, the rate }, as exact decimal strings
-- Each number read is checked as core's `saneTurns` checks it: a rate off its limits starts
-- again at the ceiling; a move in the future, a pause past the longest, a last turn past the
-- longest pause and a spacing, or anything not a number, count as absent.
local ceiling, every, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local floor, longest = tonumber(ARGV[4]), tonumber(ARGV[5])
local fields = redis.call('HMGET', KEYS[1], 'ps', 'mv', 'pu', 'la')
local ps, mv, pu, la = tonumber(fields[1]), tonumber(fields[2]), tonumber(fields[3]), tonumber(fields[4])
local function finite(x) return x ~= nil and x == x and x ~= math.huge and x ~= -math.huge end
if not finite(ps) or ps < floor or ps > ceiling then
  ps, mv, pu, la = ceiling, now, now, nil
else
  if not finite(mv) or mv > now then mv = now end
  if not finite(pu) or pu > now + longest then pu = now end
  if la ~= nil and (not finite(la) or la > now + longest + 1000 / floor) then la = nil end
end
local steps = math.floor((now - mv) / every)
if steps > 0 and ps < ceiling then
  ps = math.min(ceiling, ps + (steps * ceiling) / 10)
  mv = mv + steps * every
end
local at = math.max(now, pu)
if la ~= nil then at = math.max(at, la + 1000 / ps) end
local function exact(x) return string.format('%.17g', x) end
redis.call('HSET', KEYS[1], 'ps', exact(ps), 'mv', exact(mv), 'pu', exact(pu), 'la', exact(at))
return { exact(at), exact(ps) }
