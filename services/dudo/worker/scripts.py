"""The worker's Lua scripts. Each touches the keys of one partition only ({pN}).

The lease is a string ``<generation>|<owner>|<expires ms>``. The generation
only ever grows: it rises whenever a different worker (or the same one after
expiry) takes the partition, and every other script refuses to run unless the
caller names the current owner and generation. That is the fencing: a worker
that was paused past its lease can neither read new entries nor commit.

All times come from the Redis server (``TIME``), so workers on machines with
skewed clocks still agree on when a lease expires.
"""

from __future__ import annotations

from hashlib import sha1
from typing import Any, ClassVar

from redis.exceptions import NoScriptError

_PRELUDE = """
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
local function flatten(entries, out)
  for _, e in ipairs(entries) do
    local fields = e[2]
    local payload = ''
    if fields then
      for i = 1, #fields, 2 do
        if fields[i] == 'm' then payload = fields[i + 1] end
      end
    end
    out[#out + 1] = e[1]
    out[#out + 1] = payload
  end
  return out
end
"""

# KEYS: lease. ARGV: owner, ttl_ms. Returns the generation held, or 0 if another
# worker holds a live lease.
ACQUIRE = (
    _PRELUDE
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
    _PRELUDE
    + """
if not holds(KEYS[1], ARGV[1], ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2] .. '|' .. ARGV[1] .. '|' .. (now_ms() + tonumber(ARGV[3])))
return 1
"""
)

# KEYS: lease. ARGV: owner, gen. Keeps the generation, frees the partition now.
RELEASE = (
    _PRELUDE
    + """
if not holds(KEYS[1], ARGV[1], ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2] .. '||0')
return 1
"""
)

# KEYS: lease, inbox. ARGV: owner, gen, group, consumer, count, mode.
# mode 'new': entries never delivered. mode 'pending': first claim every entry
# pending on any consumer of the group (they are fenced out), then return this
# consumer's pending entries, oldest first (or, when none are pending, new ones).
# Returns false when fenced, else a flat list id1, payload1, id2, payload2, ...
READ = (
    _PRELUDE
    + """
if not holds(KEYS[1], ARGV[1], ARGV[2]) then return false end
local out = {}
if ARGV[6] == 'pending' then
  local start = '0-0'
  repeat
    local claimed = redis.call('XAUTOCLAIM', KEYS[2], ARGV[3], ARGV[4], 0, start,
                               'COUNT', 1000, 'JUSTID')
    start = claimed[1]
  until start == '0-0'
  local reply = redis.call('XREADGROUP', 'GROUP', ARGV[3], ARGV[4], 'COUNT', ARGV[5],
                           'STREAMS', KEYS[2], '0')
  local pending = entries_of(reply)
  if #pending > 0 then return flatten(pending, out) end
end
local reply = redis.call('XREADGROUP', 'GROUP', ARGV[3], ARGV[4], 'COUNT', ARGV[5],
                         'STREAMS', KEYS[2], '>')
return flatten(entries_of(reply), out)
"""
)

# KEYS: lease, inbox, deliveries, timers, dead letters, then one key per table.
# ARGV: owner, gen, group, then counted sections:
#   n, inbox ids to ack and delete
#   n, per table: expected version (0 = must not exist), new version, record, ttl ms (0 = keep)
#   delivery record ('' = none)
#   n, timer members to remove
#   n, per timer: member, deadline
#   n, per dead letter: entry id, reason, raw payload
# Returns {1, delivery record id or ''}; {-1} when fenced; {-2, i} when table i
# is not at its expected version (nothing is written then).
COMMIT = (
    _PRELUDE
    + """
if not holds(KEYS[1], ARGV[1], ARGV[2]) then return {-1} end
local group = ARGV[3]
local i = 4
local n_ack = tonumber(ARGV[i]); local acks = i + 1; i = i + 1 + n_ack
local n_tab = tonumber(ARGV[i]); local tabs = i + 1; i = i + 1 + 4 * n_tab
for t = 0, n_tab - 1 do
  local current = tonumber(redis.call('HGET', KEYS[6 + t], 'v') or '0')
  if current ~= tonumber(ARGV[tabs + 4 * t]) then return {-2, t} end
end
for t = 0, n_tab - 1 do
  local key = KEYS[6 + t]
  redis.call('HSET', key, 'v', ARGV[tabs + 4 * t + 1], 's', ARGV[tabs + 4 * t + 2])
  local ttl = tonumber(ARGV[tabs + 4 * t + 3])
  if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
end
local record = ''
if ARGV[i] ~= '' then
  record = redis.call('XADD', KEYS[3], '*', 'd', ARGV[i])
end
i = i + 1
local n_rm = tonumber(ARGV[i]); i = i + 1
for k = 0, n_rm - 1 do redis.call('ZREM', KEYS[4], ARGV[i + k]) end
i = i + n_rm
local n_add = tonumber(ARGV[i]); i = i + 1
for k = 0, n_add - 1 do
  redis.call('ZADD', KEYS[4], ARGV[i + 2 * k + 1], ARGV[i + 2 * k])
end
i = i + 2 * n_add
local n_dead = tonumber(ARGV[i]); i = i + 1
for k = 0, n_dead - 1 do
  redis.call('XADD', KEYS[5], 'MAXLEN', '~', 10000, '*', 'entry', ARGV[i + 3 * k],
             'reason', ARGV[i + 3 * k + 1], 'm', ARGV[i + 3 * k + 2])
end
for k = 0, n_ack - 1 do
  redis.call('XACK', KEYS[2], group, ARGV[acks + k])
  redis.call('XDEL', KEYS[2], ARGV[acks + k])
end
return {1, record}
"""
)

# KEYS: lease, timers, inbox. ARGV: owner, gen, then pairs (member, message).
# Moves each still-present timer into the inbox as an ordinary entry.
FIRE = (
    _PRELUDE
    + """
if not holds(KEYS[1], ARGV[1], ARGV[2]) then return -1 end
local fired = 0
for k = 3, #ARGV, 2 do
  if redis.call('ZREM', KEYS[2], ARGV[k]) == 1 then
    redis.call('XADD', KEYS[3], '*', 'm', ARGV[k + 1])
    fired = fired + 1
  end
end
return fired
"""
)


class Scripts:
    """The scripts, loaded once into Redis (every primary on a cluster) and called by SHA.

    Queuing ``EVALSHA`` directly on a pipeline avoids redis-py's script objects,
    which check ``SCRIPT EXISTS`` before every pipeline execution: one hidden
    round trip per cycle. If Redis lost the scripts (a restart), a call fails
    with NOSCRIPT; the worker then calls :meth:`load` and replays the cycle.
    """

    SOURCES: ClassVar[dict[str, str]] = {
        "acquire": ACQUIRE,
        "renew": RENEW,
        "release": RELEASE,
        "read": READ,
        "commit": COMMIT,
        "fire": FIRE,
    }

    def __init__(self, client: Any) -> None:
        self.client = client
        self.sha = {
            name: sha1(source.encode()).hexdigest() for name, source in self.SOURCES.items()
        }
        self.loaded = False

    def load(self) -> None:
        for source in self.SOURCES.values():
            self.client.script_load(source)
        self.loaded = True

    def queue(self, pipe: Any, name: str, script_keys: list[str], args: list[Any]) -> Any:
        """Queue one script call on ``pipe`` (or run it, if ``pipe`` is a client)."""
        return pipe.evalsha(self.sha[name], len(script_keys), *script_keys, *args)

    def run(self, name: str, script_keys: list[str], args: list[Any]) -> Any:
        """Call one script now, loading the scripts first if need be."""
        if not self.loaded:
            self.load()
        try:
            return self.queue(self.client, name, script_keys, args)
        except NoScriptError:
            self.load()
            return self.queue(self.client, name, script_keys, args)
