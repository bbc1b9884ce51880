"""The worker's Lua scripts, as Redis runs them. Each works on partitions ({pN}) and their
keys only; :mod:`.scripts` says how they are called (the lease and the fencing there).

The lease is a string ``<generation>|<owner>|<expires ms>``. Every script but ``acquire``
refuses to run unless the caller names the current owner and generation: a worker that
was paused past its lease can neither read new entries nor commit. All times come from
the Redis server (``TIME``)."""

from __future__ import annotations

# Dead letters and cut messages, in the scripts and in the Python that builds their
# arguments (scripts.commit_section, process): a gateway's message over the size cap, or
# refused for its writer or size, is kept to its first CUT_BYTES; any other dead letter
# of a gateway's to DEAD_KEEP bytes; a partition's dead letters stream keeps about
# DEAD_MAX and is gone DEAD_TTL_MS after the last.
CUT_BYTES = 256
DEAD_KEEP = 4096
DEAD_MAX = 1000
DEAD_TTL_MS = 7 * 24 * 3600 * 1000

PRELUDE = (
    f"local CUT, DEAD_KEEP, DEAD_MAX, DEAD_TTL = {CUT_BYTES}, {DEAD_KEEP}, {DEAD_MAX}, "
    f"{DEAD_TTL_MS}\n"
    + """
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
-- Each entry as five values: the index of its stream among the partition's, its id,
-- its message (field m), its signature (field s, '' if unsigned: dudo.wire.signing)
-- and the message's size in bytes. A message over `cap` bytes (0: none) comes cut to
-- its first CUT bytes: an entry over the size cap is judged by its size, and nothing
-- past the cut is ever copied out of Redis, stored nor replied.
local function flatten(entries, s, cap, out)
  for _, e in ipairs(entries) do
    local fields = e[2]
    local payload, signature = '', ''
    if fields then
      for i = 1, #fields, 2 do
        if fields[i] == 'm' then payload = fields[i + 1]
        elseif fields[i] == 's' then signature = fields[i + 1] end
      end
    end
    local size = #payload
    if cap > 0 and size > cap then payload = string.sub(payload, 1, CUT) end
    if #signature > 64 then signature = string.sub(signature, 1, 64) end
    out[#out + 1] = s
    out[#out + 1] = e[1]
    out[#out + 1] = payload
    out[#out + 1] = signature
    out[#out + 1] = size
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
)

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

# KEYS, per partition read: its lease, its dead letters, then its inbox streams: the
# deployment's first, then each admitted gateway's own (keys.Space.inbox). ARGV: owner,
# group, consumer, max deliveries, then per partition: generation, mode, the number of
# streams, and per stream: how many entries to read at most (0: none now, its writer is
# over its quota), the size cap of a message (0: none) and the backlog cap (0: none; a
# gateway's own inbox holding more unread entries loses its oldest, its own loss).
# mode 'new': entries never delivered. mode 'pending': first claim every entry
# pending on any consumer of the group, on every stream (they are fenced out), then
# return this consumer's pending entries of the first stream that has some, oldest
# first (or, when none are pending anywhere, new ones).
# A pending entry delivered more than `max deliveries` times was read again and
# again without ever being committed: it may be what kills its readers. It goes
# to the dead letters (acked and deleted) instead of being returned, so one entry
# can never stop a partition for good.
# A gateway's inbox without the group (its first XADD made the stream) gets the group
# from id 0, here: nothing written before is lost.
# Returns one element per partition: false when fenced, a string 'broken: <error>'
# when the deployment's inbox or its group is missing (the worker recreates it), else
# {more, trims, entries...}: `more` is 1 when pending entries may remain after these
# (stay in pending mode); `trims` a flat list {stream index, entries dropped} of the
# gateways' inboxes cut to their backlog cap; then five values per entry (flatten).
# Several partitions per call on a standalone Redis (one call per cycle, whatever the
# partition count); one per call on a Cluster, whose scripts may only touch one slot.
READ = (
    PRELUDE
    + """
local owner, group, consumer = ARGV[1], ARGV[2], ARGV[3]
local max_deliveries = tonumber(ARGV[4])
local function dead_letter(inbox, dead, e, times, writer)
  local payload, signature = '', ''
  local fields = e[2]
  if fields then
    for i = 1, #fields, 2 do
      if fields[i] == 'm' then payload = fields[i + 1] end
      if fields[i] == 's' then signature = fields[i + 1] end
    end
  end
  local size = #payload
  if writer ~= '' and size > DEAD_KEEP then payload = string.sub(payload, 1, CUT) end
  redis.call('XADD', dead, 'MAXLEN', '~', DEAD_MAX, '*', 'entry', e[1],
             'reason', 'internal: read ' .. times .. ' times and never committed',
             'm', payload, 's', string.sub(signature, 1, 64), 'from', writer,
             'bytes', size)
  redis.call('PEXPIRE', dead, DEAD_TTL)
  redis.call('XACK', inbox, group, e[1])
  redis.call('XDEL', inbox, e[1])
end
-- A gateway's inbox made by its own XADD has no group yet: give it one, from id 0.
local function ensure_group(inbox)
  if redis.call('EXISTS', inbox) == 0 then return false end
  redis.pcall('XGROUP', 'CREATE', inbox, group, '0')
  return true
end
-- Every entry pending on any consumer of the group, claimed by this one.
local function claim_all(inbox)
  local start = '0-0'
  repeat
    local claimed, err = try('XAUTOCLAIM', inbox, group, consumer, 0, start,
                             'COUNT', 1000, 'JUSTID')
    if not claimed then return err end
    start = claimed[1]
  until start == '0-0'
  return nil
end
-- This consumer's pending entries of one stream, oldest first, and whether more may
-- follow. The oldest is read alone first: if it was read more than twice without a
-- commit, it may be what keeps failing (a crash, say), and it is returned alone, so
-- that neither the entries behind it nor their delivery counts suffer with it; past
-- `max deliveries` it is dead-lettered and the next one looked at.
local function read_pending(inbox, dead, wanted, writer)
  local cursor = '0'
  while true do
    local first = entries_of(redis.call('XREADGROUP', 'GROUP', group, consumer,
                                        'COUNT', 1, 'STREAMS', inbox, cursor))
    if #first == 0 then return {}, 0 end
    local e = first[1]
    local row = redis.call('XPENDING', inbox, group, e[1], e[1], 1, consumer)[1]
    local times = row and tonumber(row[4]) or 0
    if times > max_deliveries then
      dead_letter(inbox, dead, e, times, writer)
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
local k, a = 1, 5
for p = 1, #ARGV do
  if a > #ARGV then break end
  local lease, dead = KEYS[k], KEYS[k + 1]
  local gen, mode, n = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  local streams, counts, caps, backlogs = {}, {}, {}, {}
  for s = 1, n do
    streams[s] = KEYS[k + 1 + s]
    counts[s] = tonumber(ARGV[a + 3 * s])
    caps[s] = tonumber(ARGV[a + 3 * s + 1])
    backlogs[s] = tonumber(ARGV[a + 3 * s + 2])
  end
  k, a = k + 2 + n, a + 3 + 3 * n
  local out = {0, {}}
  if not holds(lease, owner, gen) then
    out = false
  else
    local err = nil
    -- A gateway's inbox past its backlog cap loses its oldest entries (its own).
    for s = 2, n do
      if backlogs[s] > 0 then
        local length = redis.call('XLEN', streams[s])
        if length > backlogs[s] then
          -- '~': whole nodes at a time (a flood of 100,000 costs no long stall here)
          redis.call('XTRIM', streams[s], 'MAXLEN', '~', backlogs[s])
          out[2][#out[2] + 1] = s
          out[2][#out[2] + 1] = length - redis.call('XLEN', streams[s])
        end
      end
    end
    local found = false
    if mode == 'pending' then
      for s = 1, n do
        local e = claim_all(streams[s])
        if e and s == 1 then err = e end
      end
      for s = 1, n do
        if not err and not found then
          local writer = ''
          if s > 1 then
            writer = string.sub(streams[s], string.find(streams[s], ':in:', 1, true) + 4)
          end
          -- (entries left pending are read whatever the quota: they were read before)
          local ok, batch = pcall(read_pending, streams[s], dead, math.max(counts[s], 1), writer)
          if ok and #batch > 0 then
            found = true
            out[1] = 1
            flatten(batch, s, caps[s], out)
          end
        end
      end
    end
    if not err and not found then
      for s = 1, n do
        if counts[s] > 0 then
          local fresh, e = try('XREADGROUP', 'GROUP', group, consumer, 'COUNT', counts[s],
                               'STREAMS', streams[s], '>')
          if not fresh and s > 1 and ensure_group(streams[s]) then
            fresh, e = try('XREADGROUP', 'GROUP', group, consumer, 'COUNT', counts[s],
                           'STREAMS', streams[s], '>')
          end
          if fresh then
            flatten(entries_of(fresh), s, caps[s], out)
          elseif s == 1 then
            err = e
          end
        end
      end
    end
    if err then out = 'broken: ' .. tostring(err) end
  end
  result[#result + 1] = out
end
return result
"""
)

# One or more partitions per call, like READ (all of them on a standalone Redis,
# one per call on a Cluster). KEYS, per partition: lease, deliveries, timers, dead
# letters, lobby, then one key per inbox stream acked (the deployment's, gateways'),
# then one key per table written, then one per gateway outbox delivered to, then one
# per stream sent to. ARGV: owner, group, outbox max length, outbox ttl ms, then per
# partition a section (see commit_section):
#   generation
#   n, per inbox stream: n, entry ids to ack and delete
#   n, per table: expected version (0 = must not exist), new version, record, ttl ms
#      (0 = keep), then n, per row: field, value ('' = delete) (rows: fields of the
#      record's hash beside v and s that change on their own, a tournament's entrants)
#   delivery record ('' = none)
#   n, timer members to remove
#   n, per timer: member, deadline
#   n, per dead letter: entry id, reason, the message (cut past 4 KiB if a gateway
#      wrote it), its signature ('' = none), its writer ('' = the deployment), its size
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
  local lease, deliveries, timers, dead, lobby = KEYS[k], KEYS[k + 1], KEYS[k + 2],
    KEYS[k + 3], KEYS[k + 4]
  local gen = ARGV[i]; i = i + 1
  local n_inbox = tonumber(ARGV[i]); i = i + 1
  local inboxes = {}
  for s = 1, n_inbox do
    inboxes[s] = i
    i = i + 1 + tonumber(ARGV[i])
  end
  local first_table = k + 5 + n_inbox
  local n_tab = tonumber(ARGV[i]); i = i + 1
  local tabs = {}
  for t = 0, n_tab - 1 do
    tabs[t] = i
    i = i + 5 + 2 * tonumber(ARGV[i + 4])
  end
  local record_at = i; i = i + 1
  local n_rm = tonumber(ARGV[i]); local rms = i + 1; i = i + 1 + n_rm
  local n_add = tonumber(ARGV[i]); local adds = i + 1; i = i + 1 + 2 * n_add
  local n_dead = tonumber(ARGV[i]); local deads = i + 1; i = i + 1 + 6 * n_dead
  local n_lobby = tonumber(ARGV[i]); local lobbies = i + 1; i = i + 1 + 2 * n_lobby
  local n_out = tonumber(ARGV[i]); local outs = i + 1; i = i + 1 + n_out
  local n_send = tonumber(ARGV[i]); local sends = i + 1; i = i + 1 + 2 * n_send
  local next_k, next_i = first_table + n_tab + n_out + n_send, i
  if not holds(lease, owner, gen) then return {-1}, next_k, next_i end
  for t = 0, n_tab - 1 do
    local current = tonumber(redis.call('HGET', KEYS[first_table + t], 'v') or '0')
    if current ~= tonumber(ARGV[tabs[t]]) then return {-2, t}, next_k, next_i end
  end
  for t = 0, n_tab - 1 do
    local key, at = KEYS[first_table + t], tabs[t]
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
    local at = deads + 6 * d
    redis.call('XADD', dead, 'MAXLEN', '~', DEAD_MAX, '*', 'entry', ARGV[at],
               'reason', ARGV[at + 1], 'm', ARGV[at + 2], 's', ARGV[at + 3],
               'from', ARGV[at + 4], 'bytes', ARGV[at + 5])
  end
  if n_dead > 0 then redis.call('PEXPIRE', dead, DEAD_TTL) end  -- a week after the last
  for l = 0, n_lobby - 1 do
    local tid, entry = ARGV[lobbies + 2 * l], ARGV[lobbies + 2 * l + 1]
    if entry == '' then
      redis.call('HDEL', lobby, tid)
    else
      redis.call('HSET', lobby, tid, entry)
    end
  end
  for o = 0, n_out - 1 do
    local outbox = KEYS[first_table + n_tab + o]
    redis.call('XADD', outbox, 'MAXLEN', '~', outbox_maxlen, '*', 'm', ARGV[outs + o])
    redis.call('PEXPIRE', outbox, outbox_ttl)  -- a dead gateway's outbox goes
  end
  for o = 0, n_send - 1 do
    append(KEYS[first_table + n_tab + n_out + o], ARGV[sends + 2 * o], ARGV[sends + 2 * o + 1])
  end
  -- Acked and deleted a chunk at a time (one call per chunk, not two per entry).
  for s = 1, n_inbox do
    local inbox, at = KEYS[k + 4 + s], inboxes[s]
    local n_ack = tonumber(ARGV[at])
    for first = 0, n_ack - 1, 256 do
      local ids = {}
      for a = first, math.min(first + 255, n_ack - 1) do ids[#ids + 1] = ARGV[at + 1 + a] end
      -- pcall: the group may have vanished since the read; the entries are deleted anyway
      redis.pcall('XACK', inbox, group, unpack(ids))
      redis.pcall('XDEL', inbox, unpack(ids))
    end
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
