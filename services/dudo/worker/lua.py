"""The worker's Lua scripts, as Redis runs them. Each works on partitions ({pN}) and their
keys only; :mod:`.scripts` says how they are called (the lease and the fencing there).

The lease is a string ``<generation>|<owner>|<expires ms>``. Every script but ``acquire``
refuses to run unless the caller names the current owner and generation: a worker that
was paused past its lease can neither read new entries nor commit. All times come from
the Redis server (``TIME``)."""

from __future__ import annotations

PRELUDE = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function parse_lease(key)
  local cur = redis.call('GET', key)
  if not cur then return 0, '', 0 end
  local a, b = string.find(cur, '|', 1, true)
  local c, d = string.find(cur, '|', b + 1, true)
  return tonumber(string.sub(cur, 1, a - 1)), string.sub(cur, b + 1, c - 1),
         tonumber(string.sub(cur, d + 1))
end
local function holds(key, owner, gen)
  local g, o = parse_lease(key)
  return g == tonumber(gen) and o == owner
end
-- XREADGROUP's reply inside Lua: {{stream, entries}} on Redis; fakeredis drops
-- the outer array. Return the entries either way (empty when nothing came).
local function entries_of(reply)
  if not reply or not reply[1] then return {} end
  if type(reply[1]) == 'table' then return reply[1][2] end
  return reply[2] or {}
end
-- A stream command that may meet a missing inbox or group (deleted, evicted, or
-- recreated by an XADD without its group): nil and the error instead of aborting
-- the whole script, so one broken partition never stalls the others in a call.
local function try(...)
  local reply = redis.pcall(...)
  if type(reply) == 'table' and reply.err then return nil, reply.err end
  return reply
end
-- Each entry as three values: its id, its message (field m) and its signature
-- (field s, '' if unsigned: dudo.wire.signing).
local function flatten(entries, out)
  for _, e in ipairs(entries) do
    local fields = e[2]
    local payload, signature = '', ''
    if fields then
      for i = 1, #fields, 2 do
        if fields[i] == 'm' then payload = fields[i + 1]
        elseif fields[i] == 's' then signature = fields[i + 1] end
      end
    end
    out[#out + 1] = e[1]
    out[#out + 1] = payload
    out[#out + 1] = signature
  end
  return out
end
-- XADD an entry, with its signature if it has one.
local function append(key, payload, signature)
  if signature ~= '' then
    return redis.call('XADD', key, '*', 'm', payload, 's', signature)
  end
  return redis.call('XADD', key, '*', 'm', payload)
end
"""

# KEYS: lease. ARGV: owner, ttl_ms. Returns the generation held, or 0 if another
# worker holds a live lease.
ACQUIRE = (
    PRELUDE
    + """
local gen, owner, expires = parse_lease(KEYS[1])
local now = now_ms()
if owner ~= '' and owner ~= ARGV[1] and expires >= now then return 0 end
if owner ~= ARGV[1] or expires < now then gen = gen + 1 end
redis.call('SET', KEYS[1], gen .. '|' .. ARGV[1] .. '|' .. (now + tonumber(ARGV[2])))
return gen
"""
)

# KEYS: lease. ARGV: owner, gen, ttl_ms. 1 = renewed, 0 = lost.
RENEW = (
    PRELUDE
    + """
if not holds(KEYS[1], ARGV[1], ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2] .. '|' .. ARGV[1] .. '|' .. (now_ms() + tonumber(ARGV[3])))
return 1
"""
)

# KEYS: lease. ARGV: owner, gen. Keeps the generation, frees the partition now.
RELEASE = (
    PRELUDE
    + """
if not holds(KEYS[1], ARGV[1], ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2] .. '||0')
return 1
"""
)

# KEYS: lease, inbox and dead letters of each partition read (triples). ARGV:
# owner, group, consumer, count, max deliveries, then generation and mode of each
# partition, in the same order.
# mode 'new': entries never delivered. mode 'pending': first claim every entry
# pending on any consumer of the group (they are fenced out), then return this
# consumer's pending entries, oldest first (or, when none are pending, new ones).
# A pending entry delivered more than `max deliveries` times was read again and
# again without ever being committed: it may be what kills its readers. It goes
# to the dead letters (acked and deleted) instead of being returned, so one entry
# can never stop a partition for good.
# Returns one element per partition: false when fenced, a string 'broken: <error>'
# when the inbox or its group is missing (the worker recreates it), else a flat list
# more, id1, payload1, id2, payload2, ... where `more` is 1 when pending entries may
# remain after these (stay in pending mode). Several partitions per call on a standalone Redis
# (one call per cycle, whatever the partition count); one per call on a Cluster,
# whose scripts may only touch one hash slot.
READ = (
    PRELUDE
    + """
local owner, group, consumer, count = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local max_deliveries = tonumber(ARGV[5])
local function dead_letter(inbox, dead, e, times)
  local payload, signature = '', ''
  local fields = e[2]
  if fields then
    for i = 1, #fields, 2 do
      if fields[i] == 'm' then payload = fields[i + 1] end
      if fields[i] == 's' then signature = fields[i + 1] end
    end
  end
  redis.call('XADD', dead, 'MAXLEN', '~', 10000, '*', 'entry', e[1],
             'reason', 'internal: read ' .. times .. ' times and never committed',
             'm', payload, 's', signature)
  redis.call('XACK', inbox, group, e[1])
  redis.call('XDEL', inbox, e[1])
end
-- This consumer's pending entries, oldest first, and whether more may follow.
-- The oldest is read alone first: if it was read more than twice without a
-- commit, it may be what keeps failing (a crash, say), and it is returned alone,
-- so that neither the entries behind it nor their delivery counts suffer with
-- it; past `max deliveries` it is dead-lettered and the next one looked at.
local function read_pending(lease, inbox, dead)
  local start = '0-0'
  repeat
    local claimed, err = try('XAUTOCLAIM', inbox, group, consumer, 0, start,
                             'COUNT', 1000, 'JUSTID')
    if not claimed then return nil, 0, err end
    start = claimed[1]
  until start == '0-0'
  local cursor, wanted = '0', tonumber(count)
  while true do
    local first = entries_of(redis.call('XREADGROUP', 'GROUP', group, consumer,
                                        'COUNT', 1, 'STREAMS', inbox, cursor))
    if #first == 0 then return {}, 0 end
    local e = first[1]
    local row = redis.call('XPENDING', inbox, group, e[1], e[1], 1, consumer)[1]
    local times = row and tonumber(row[4]) or 0
    if times > max_deliveries then
      dead_letter(inbox, dead, e, times)
      cursor = e[1]
    elseif times > 2 then
      return {e}, 1
    else
      local batch = {e}
      if wanted > 1 then
        local rest = entries_of(redis.call('XREADGROUP', 'GROUP', group, consumer,
                                           'COUNT', wanted - 1, 'STREAMS', inbox, e[1]))
        for _, r in ipairs(rest) do batch[#batch + 1] = r end
      end
      return batch, (#batch >= wanted) and 1 or 0
    end
  end
end
local result = {}
for p = 1, #KEYS / 3 do
  local lease, inbox, dead = KEYS[3 * p - 2], KEYS[3 * p - 1], KEYS[3 * p]
  local gen, mode = ARGV[4 + 2 * p], ARGV[5 + 2 * p]
  local out = {0}
  if not holds(lease, owner, gen) then
    out = false
  else
    local pending, more, err = {}, 0, nil
    if mode == 'pending' then pending, more, err = read_pending(lease, inbox, dead) end
    if pending and #pending > 0 then
      out[1] = more
      flatten(pending, out)
    elseif pending then
      local fresh
      fresh, err = try('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count,
                       'STREAMS', inbox, '>')
      if fresh then flatten(entries_of(fresh), out) end
    end
    if err then out = 'broken: ' .. tostring(err) end
  end
  result[p] = out
end
return result
"""
)

# One or more partitions per call, like READ (all of them on a standalone Redis,
# one per call on a Cluster). KEYS, per partition: lease, inbox, deliveries,
# timers, dead letters, lobby, then one key per table written, then one per gateway
# outbox delivered to, then one per stream sent to. ARGV: owner, group, outbox max
# length, outbox ttl ms, then per partition a section (see commit_section):
#   generation
#   n, inbox ids to ack and delete
#   n, per table: expected version (0 = must not exist), new version, record, ttl ms
#      (0 = keep), then n, per row: field, value ('' = delete) (rows: fields of the
#      record's hash beside v and s that change on their own, a tournament's entrants)
#   delivery record ('' = none)
#   n, timer members to remove
#   n, per timer: member, deadline
#   n, per dead letter: entry id, reason, raw payload, its signature ('' = none)
#   n, per lobby change: table, entry ('' = no longer open)
#   n, per outbox: the entry appended (messages delivered with the commit itself)
#   n, per stream sent to: the entry appended and its signature ('' = none), never
#      trimmed (another partition's inbox: a table's report to its tournament, a
#      tournament's orders to a table)
# Returns, per partition: {1, delivery record id or ''}; {-1} when fenced; {-2, i}
# when table i is not at its expected version (nothing of that partition is
# written then). Each partition commits or not on its own.
COMMIT = (
    PRELUDE
    + """
local owner, group = ARGV[1], ARGV[2]
local outbox_maxlen, outbox_ttl = ARGV[3], ARGV[4]
local function commit_one(k, i)
  local lease, inbox, deliveries, timers, dead, lobby = KEYS[k], KEYS[k + 1],
    KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5]
  local gen = ARGV[i]; i = i + 1
  local n_ack = tonumber(ARGV[i]); local acks = i + 1; i = i + 1 + n_ack
  local n_tab = tonumber(ARGV[i]); i = i + 1
  local tabs = {}
  for t = 0, n_tab - 1 do
    tabs[t] = i
    i = i + 5 + 2 * tonumber(ARGV[i + 4])
  end
  local record_at = i; i = i + 1
  local n_rm = tonumber(ARGV[i]); local rms = i + 1; i = i + 1 + n_rm
  local n_add = tonumber(ARGV[i]); local adds = i + 1; i = i + 1 + 2 * n_add
  local n_dead = tonumber(ARGV[i]); local deads = i + 1; i = i + 1 + 4 * n_dead
  local n_lobby = tonumber(ARGV[i]); local lobbies = i + 1; i = i + 1 + 2 * n_lobby
  local n_out = tonumber(ARGV[i]); local outs = i + 1; i = i + 1 + n_out
  local n_send = tonumber(ARGV[i]); local sends = i + 1; i = i + 1 + 2 * n_send
  local next_k, next_i = k + 6 + n_tab + n_out + n_send, i
  if not holds(lease, owner, gen) then return {-1}, next_k, next_i end
  for t = 0, n_tab - 1 do
    local current = tonumber(redis.call('HGET', KEYS[k + 6 + t], 'v') or '0')
    if current ~= tonumber(ARGV[tabs[t]]) then return {-2, t}, next_k, next_i end
  end
  for t = 0, n_tab - 1 do
    local key, at = KEYS[k + 6 + t], tabs[t]
    redis.call('HSET', key, 'v', ARGV[at + 1], 's', ARGV[at + 2])
    for r = 0, tonumber(ARGV[at + 4]) - 1 do
      local name, value = ARGV[at + 5 + 2 * r], ARGV[at + 6 + 2 * r]
      if value == '' then
        redis.call('HDEL', key, name)
      else
        redis.call('HSET', key, name, value)
      end
    end
    local ttl = tonumber(ARGV[at + 3])
    if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
  end
  local record = ''
  if ARGV[record_at] ~= '' then
    record = redis.call('XADD', deliveries, '*', 'd', ARGV[record_at])
  end
  for r = 0, n_rm - 1 do redis.call('ZREM', timers, ARGV[rms + r]) end
  for a = 0, n_add - 1 do
    redis.call('ZADD', timers, ARGV[adds + 2 * a + 1], ARGV[adds + 2 * a])
  end
  for d = 0, n_dead - 1 do
    redis.call('XADD', dead, 'MAXLEN', '~', 10000, '*', 'entry', ARGV[deads + 4 * d],
               'reason', ARGV[deads + 4 * d + 1], 'm', ARGV[deads + 4 * d + 2],
               's', ARGV[deads + 4 * d + 3])
  end
  for l = 0, n_lobby - 1 do
    local tid, entry = ARGV[lobbies + 2 * l], ARGV[lobbies + 2 * l + 1]
    if entry == '' then
      redis.call('HDEL', lobby, tid)
    else
      redis.call('HSET', lobby, tid, entry)
    end
  end
  for o = 0, n_out - 1 do
    local outbox = KEYS[k + 6 + n_tab + o]
    redis.call('XADD', outbox, 'MAXLEN', '~', outbox_maxlen, '*', 'm', ARGV[outs + o])
    redis.call('PEXPIRE', outbox, outbox_ttl)  -- a dead gateway's outbox goes
  end
  for o = 0, n_send - 1 do
    append(KEYS[k + 6 + n_tab + n_out + o], ARGV[sends + 2 * o], ARGV[sends + 2 * o + 1])
  end
  -- Acked and deleted a chunk at a time (one call per chunk, not two per entry).
  for first = 0, n_ack - 1, 256 do
    local ids = {}
    for a = first, math.min(first + 255, n_ack - 1) do ids[#ids + 1] = ARGV[acks + a] end
    -- pcall: the group may have vanished since the read; the entries are deleted anyway
    redis.pcall('XACK', inbox, group, unpack(ids))
    redis.call('XDEL', inbox, unpack(ids))
  end
  return {1, record}, next_k, next_i
end
local results = {}
local k, i = 1, 5
while i <= #ARGV do
  local result
  result, k, i = commit_one(k, i)
  results[#results + 1] = result
end
return results
"""
)

# KEYS: lease, timers, inbox. ARGV: owner, gen, then triples (member, message, its
# signature or ''). Moves each still-present timer into the inbox as an ordinary entry.
FIRE = (
    PRELUDE
    + """
if not holds(KEYS[1], ARGV[1], ARGV[2]) then return -1 end
local fired = 0
for k = 3, #ARGV, 3 do
  if redis.call('ZREM', KEYS[2], ARGV[k]) == 1 then
    append(KEYS[3], ARGV[k + 1], ARGV[k + 2])
    fired = fired + 1
  end
end
return fired
"""
)
