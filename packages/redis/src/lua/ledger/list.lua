-- Lists ledger entries newest first from an index, at most 2 000 index entries a call.
-- KEYS[1]  the index to walk (by first recording: all entries, or an account's)
-- ARGV[1]  entry key prefix
-- ARGV[2]  cursor score ('' for none)
-- ARGV[3]  cursor id
-- ARGV[4]  since (ms, or '-inf')
-- ARGV[5]  until (ms; '' for none)
-- ARGV[6]  page size
-- ARGV[7]  statuses, comma-separated ('' for any)
-- ARGV[8]  '1' when no status can match
-- ARGV[9]  event type ('' for any)
-- Returns  { matches as { v, e, b, x, c, score, id }..., 1 when there is more, last score,
--          last id (of the last index entry walked) }
local prefix = ARGV[1]
local cursorScore = ARGV[2] ~= '' and tonumber(ARGV[2]) or nil
local cursorId = ARGV[3]
local max = cursorScore and ARGV[2] or '+inf'
local untilScore = ARGV[5] ~= '' and tonumber(ARGV[5]) or nil
local limit = tonumber(ARGV[6])
local statuses = nil
if ARGV[7] ~= '' then
  statuses = {}
  for s in string.gmatch(ARGV[7], '[^,]+') do statuses[s] = true end
end
if ARGV[8] == '1' then return {{}, 0, '', ''} end
local out = {}
local offset = 0
local walked = 0
local lastScore, lastId = '', ''
while walked < 2000 do
  local batch = redis.call('ZREVRANGEBYSCORE', KEYS[1], max, ARGV[4], 'WITHSCORES', 'LIMIT', offset, 200)
  if #batch == 0 then return {out, 0, lastScore, lastId} end
  offset = offset + #batch / 2
  for i = 1, #batch, 2 do
    local id, score = batch[i], batch[i + 1]
    local n = tonumber(score)
    if not (cursorScore and n == cursorScore and id >= cursorId) then
      walked = walked + 1
      lastScore, lastId = score, id
      if not (untilScore and n >= untilScore) then
        local f = redis.call('HMGET', prefix .. id, 'v', 'e', 'b', 'x', 's', 't', 'c')
        if f[1] and (not statuses or statuses[f[5]]) and (ARGV[9] == '' or f[6] == ARGV[9]) then
          if #out == limit then return {out, 1, lastScore, lastId} end
          table.insert(out, {f[1], f[2], f[3] or '', f[4] or '', f[7] or '', score, id})
        end
      end
    end
  end
end
return {out, 1, lastScore, lastId}
