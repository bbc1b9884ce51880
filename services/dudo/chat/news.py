"""The lines a chat room is told: a table's news from its public view, whose turn it is,
the table in one line, a player's own dice (to that player alone) and refusals in the
player's words. Pure functions of a :class:`Room` and a view; :mod:`.rooms` decides when.

Public lines are made from the public part of a view alone (:func:`.room.public_of`);
a player's dice come from that player's own seat view and go to that player's nick.
People are named as the chat knows them (a nick for our players, the table's name
for the others), never by seat number."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any

from ..text import (
    WORDS,
    bid_text,
    dice_text,
    event_line,
    player_label,
    result_lines,
    reveal_text,
    say,
    summary_line,
)
from ..wire import BAD_RULES
from .room import Line, Room


def bots_text(count: int, lang: str) -> str:
    """ "1 bot", "2 bots" (and so in every language)."""
    return say("one_bot", lang) if count == 1 else say("n_bots", lang, n=count)


def announce(room: Room, view: dict[str, Any], bids: bool = True) -> list[Line]:
    """The channel's lines for a new version of the table (public only); the room then
    remembers that version's names, status, round and deadline. ``bids=False``: the
    bids are not lines (a chat that shows them on its :func:`board_line`)."""
    lang, status, game = room.lang, view["status"], view["game"]
    names = [p["name"] if p else None for p in view["players"]]
    marked = {p["name"]: player_label(p, lang) for p in view["players"] if p}
    texts: list[str | None] = [*_seating_news(room, names, marked, status)]
    if status != "open" and room.status in (None, "open") and game is not None:
        texts.append(say("begins", lang, names=", ".join(marked.get(n, n) for n in names if n)))
    texts += _events_news(room, view, bids)
    if game is not None and game["phase"] != "over" and game["round"] != room.round:
        texts.append(summary_line(view, lang))
    if status == "over" and room.status != "over" and game is not None:
        texts.append(" · ".join(result_lines(view, lang)))
    room.names, room.status = names, status
    room.round = game["round"] if game else None
    room.deadline = view.get("deadline")
    return [(room.channel, text) for text in texts if text] + call_turn(room, view)


def _seating_news(
    room: Room, names: list[str | None], marked: dict[str, str], status: str
) -> list[str]:
    """An open table: opened (the first version this channel sees of its own table), or
    who joined and who left since the names the channel last heard."""
    lang = room.lang
    if status == "open" and room.status is None and room.opener is not None:
        host = room.nicks.get(room.host or "", room.opener)
        return [say("opened", lang, host=host, table=room.table, preset=room.preset,
                    seats=len(names), bots=bots_text(room.bots, lang))]  # fmt: skip
    if status != "open":
        return []
    texts: list[str] = []
    count = sum(1 for n in room.names if n)  # as the channel last heard it
    for old, new in zip_longest(room.names, names):
        if new and not old:
            count += 1
            texts.append(say("joins", lang, who=marked.get(new, new), taken=count,
                             seats=len(names)))  # fmt: skip
        elif old and not new:
            count -= 1
            texts.append(say("leaves", lang, who=old, taken=count, seats=len(names)))
    return texts


def _events_news(room: Room, view: dict[str, Any], bids: bool) -> list[str | None]:
    """A line for each of the version's events (the bids only where ``bids``); the
    game's last reveal in one line, a part per hand."""
    lang, game = room.lang, view["game"]
    texts: list[str | None] = []  # None: an event that says nothing in a channel
    for event in view["events"]:
        if event["type"] == "closed":
            texts.append(say("table_closed", lang, table=room.table))
        elif event["type"] == "reveal" and game and game.get("last_round"):
            parts = reveal_text(view, lang).splitlines()  # a line per hand: one here
            texts.append(" · ".join(" ".join(part.split()) for part in parts))
        elif bids or event["type"] != "bid":
            texts.append(event_line(view, event, lang))
    return texts


def call_turn(room: Room, view: dict[str, Any]) -> list[Line]:
    """Name the player whose turn it is, when it is one of ours and a new turn (a turn
    called before is called again after ``room.turn_key`` is cleared)."""
    game = view["game"]
    if view["status"] != "playing" or game is None or game["phase"] == "over":
        room.turn_player = None
        return []
    # A new turn: another round, seat or bid, or the same seat bidding after it chose
    # the direction (the loser who chooses also opens).
    key = [game["round"], game["turn"], len(game["bids"]), int(game["phase"] == "direction")]
    holder = next((p for p, s in room.seats.items() if s == game["turn"]), None)
    room.turn_player = holder if holder in room.nicks else None
    if key == room.turn_key or room.turn_player is None:
        room.turn_key = key
        return []
    room.turn_key = key
    who = room.nicks[room.turn_player]
    lang = room.lang_of(who)  # addressed to them: in their language
    if game["phase"] == "direction":
        standing = say("choose_dir", lang)
    elif game["bids"]:  # whose bid too: a chat showing bids on a board has no bid line
        bidder, quantity, face = game["bids"][-1]
        standing = say("standing_bid", lang, bid=bid_text(quantity, face, lang),
                       who=name_of_seat(room, bidder, view))  # fmt: skip
    else:
        standing = say("open_round", lang)
    return [(room.channel, say("turn_call", lang, who=who, standing=standing))]


def table_line(room: Room) -> str:
    """``!table``: the seats, or the round with each count and the bid to beat."""
    public = room.public
    if public is None or public["game"] is None:
        taken = sum(1 for n in room.names if n)
        return say("waiting", room.lang, table=room.table, taken=taken, seats=len(room.names))
    if public["status"] == "over":
        return " · ".join(result_lines(public, room.lang))
    game = public["game"]
    if game["bids"]:
        bidder, quantity, face = game["bids"][-1]
        standing = say("standing_bid", room.lang, bid=bid_text(quantity, face, room.lang),
                       who=name_of_seat(room, bidder))  # fmt: skip
    else:
        standing = say("no_bid_yet", room.lang)
    return f"{room.table} · {summary_line(public, room.lang)} · {standing}"


def board_line(room: Room) -> str:
    """The room's table as it stands, for a message edited in place: :func:`table_line`
    and, in a game, whose turn it is (by name: a chat mentions our players apart)."""
    line = table_line(room)
    public = room.public
    game = public["game"] if public is not None else None
    if public is None or public["status"] != "playing" or game is None:
        return line
    if game["phase"] == "over":
        return line
    return f"{line} · {say('board_turn', room.lang, who=name_of_seat(room, game['turn']))}"


def dice_line(room: Room, player: str) -> str | None:
    """A player's own dice this round, from their own seat view (None: none in play)."""
    view = room.views.get(player) or {}
    game = view.get("game") or {}
    if not game.get("dice") or view.get("status") != "playing":
        return None
    return say("dice_round", room.lang_of(room.nicks.get(player)), table=room.table,
               round=game["round"], dice=dice_text(game["dice"]))  # fmt: skip


def name_of_seat(room: Room, seat: int | None, public: dict[str, Any] | None = None) -> str:
    """A seat's player as the chat knows them: our player's nick, else the table's name
    (in ``public``, the view being told, else the room's last)."""
    holder = next((p for p, s in room.seats.items() if s == seat), "")
    if holder in room.nicks:
        return room.nicks[holder]
    public = public or room.public
    players = public["players"] if public else []
    player = players[seat] if seat is not None and 0 <= seat < len(players) else None
    return player_label(player, room.lang) if player else "?"


def refusal(
    room: Room, who: str, code: str, message: str = "", facts: dict[str, Any] | None = None
) -> str:
    """A refusal in the player's words and language, naming people, not seats: from the
    refusal's ``facts`` (the table's state when it refused), else the room's last view.
    A code without a sentence of its own is said by its code (and, in English, the
    table's message, which is English). In the language of the person refused."""
    lang = room.lang_of(who)
    if f"err_{code}" not in WORDS.get(lang, WORDS["en"]):
        line = say("refused_code", lang, who=who, code=code)
        return f"{line}: {message}" if lang == "en" and message else line
    if code == BAD_RULES and lang == "en" and message:  # which rule: the table's words
        return f"{say('err_bad_rules', lang, who=who)} ({message})"
    game = {**((room.public or {}).get("game") or {}), **(facts or {})}
    bids = [facts["bid"]] if facts and "bid" in facts else game.get("bids") or []
    host = (facts or {}).get("host") or (room.public.get("host") if room.public else None)
    host_name = room.nicks.get(host or room.host or "") or say("the_host", lang)
    if code == "not_host" and not room.nicks.get(host or room.host or ""):
        code = "not_host_unknown"  # a host we cannot name (another app's player)
    facts = {
        "who": who,
        "turn": name_of_seat(room, game.get("turn")),
        "host": host_name,
        "bid": bid_text(bids[-1][1], bids[-1][2], lang) if bids else say("no_bid_yet", lang),
        "dice": game.get("dice_in_play", 0),
    }
    return say(f"err_{code}", lang, **facts)
