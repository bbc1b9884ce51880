"""A table as lines of text, and typed commands as actions: what a text client needs
(``dudo play`` today; pure functions, no I/O, so any text gateway can share them).

Seats are numbered from 1, as people count them; the protocol's seats are 0-based.
"""

from __future__ import annotations

from typing import Any

FACES = {1: "ones", 2: "twos", 3: "threes", 4: "fours", 5: "fives", 6: "sixes"}
FACE = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
HELP = (
    "commands: <quantity> <face> (a bid, e.g. 3 5 for three fives) · dudo · calza · "
    "left · right (who plays next, when asked) · start (host) · help · quit"
)


def dice_text(dice: list[int]) -> str:
    return " ".join(f"[{d}]" for d in dice)


def bid_text(quantity: int, face: int) -> str:
    return f"{quantity} × {(FACE if quantity == 1 else FACES)[face]}"


def _name(view: dict[str, Any], seat: int | None, *, you: bool = True) -> str:
    if seat is None:
        return "?"
    players = view["players"]
    player = players[seat] if 0 <= seat < len(players) else None
    label = player["name"] if player else f"seat {seat + 1}"
    return f"{label} (you)" if you and seat == view["seat"] else label


def palifico_text(game: dict[str, Any]) -> str:
    ones = "ones stay wild" if game["rules"].get("palifico_wild_ones") else "ones are not wild"
    return f"PALIFICO: the face is locked, {ones}"


def render(view: dict[str, Any]) -> str:
    """The whole table: players and their dice counts, your dice, the bids so far."""
    game = view["game"]
    players = view["players"]
    if game is None:
        taken = sum(1 for p in players if p)
        return f"Table {view['table']}: waiting for players ({taken}/{len(players)})"
    flag = f"  {palifico_text(game)}" if game["palifico"] and game["phase"] != "over" else ""
    lines = [f"Table {view['table']} · round {game['round']} · {game['dice_in_play']} dice{flag}"]
    for seat, player in enumerate(players):
        if player is None:
            continue
        count = game["dice_counts"][seat]
        mark = "  ← turn" if game["turn"] == seat and game["phase"] != "over" else ""
        bot = f" [bot {player['bot']}]" if player["bot"] else ""
        shown = f"{'■' * count:<6} {count}" if count else "out"
        lines.append(f"  {seat + 1}. {_name(view, seat) + bot:<28} {shown}{mark}")
    if game["phase"] == "over":
        lines.append(f"Winner: {_name(view, game['winner'])}")
        lines.append("Standings: " + ", ".join(_name(view, s) for s in game["standings"]))
        return "\n".join(lines)
    if game.get("dice"):
        lines.append(f"Your dice: {dice_text(game['dice'])}")
    if game["bids"]:
        lines.append("Bids: " + ", ".join(f"{_name(view, s)} {q}×{f}" for s, q, f in game["bids"]))
    return "\n".join(lines)


def event_line(view: dict[str, Any], event: dict[str, Any]) -> str | None:
    """One thing that happened, as a line (None: shown some other way, or not at all)."""
    kind = event["type"]
    seat = event.get("seat")
    you = seat is not None and seat == view["seat"]
    who, s = ("You", "") if you else (_name(view, seat), "s")
    if kind == "bid":
        return f"{who} bid{s} {bid_text(event['quantity'], event['face'])}"
    if kind in ("dudo", "calza"):
        return f"{who} call{s} {kind.capitalize()}!"
    if kind == "direction":
        game = view["game"]
        return f"{who} choose{s}: {_name(view, game['turn'])} plays next" if game else None
    if kind == "house_bot":
        return f"(the clock ran out: the house plays for {'you' if you else who})"
    if kind == "eliminated":
        return "You are out." if you else f"{who} is out."
    return None


def reveal_text(view: dict[str, Any]) -> str:
    """The round that just ended: every hand, the count, who lost or won a die."""
    last = view["game"]["last_round"]
    bidder, quantity, face = last["bid"]
    call = last["call"].upper()
    lines = [f"— {call} by {_name(view, last['caller'])} on {_name(view, bidder)}'s "
             f"{bid_text(quantity, face)}"]  # fmt: skip
    for seat, hand in enumerate(last["dice"]):
        if hand:
            lines.append(f"    {_name(view, seat):<20} {dice_text(hand)}")
    outcome = f"    {last['count']} counted"
    if last["loser"] is not None:
        outcome += f"; {_name(view, last['loser'])} loses a die"
    if last["gainer"] is not None:
        outcome += f"; {_name(view, last['gainer'])} wins a die back"
    lines.append(outcome)
    return "\n".join(lines)


def turn_text(view: dict[str, Any]) -> str:
    """What to decide: the bid to beat, what is legal, a suggestion, your odds."""
    game = view["game"]
    legal = game["legal"]
    if legal["direction"]:
        left = _name(view, _next(game, view["seat"], -1), you=False)
        right = _name(view, _next(game, view["seat"], 1), you=False)
        return f"Your turn. Who plays next? left: {left} · right: {right}"
    standing = game["bids"][-1] if game["bids"] else None
    beat = (
        f"To beat: {bid_text(standing[1], standing[2])} ({_name(view, standing[0])}). "
        if standing
        else "You open the round. "
    )
    text = f"Your turn. {beat}{legal_text(legal, game)}"
    odds = game.get("odds")
    if odds and standing and odds.get("bid_true") is not None:
        text += f" Odds: the bid to beat is true {round(odds['bid_true'] * 100)}%."
    return text


def _next(game: dict[str, Any], seat: int, step: int) -> int:
    counts = game["dice_counts"]
    for i in range(1, len(counts)):
        other = (seat + step * i) % len(counts)
        if counts[other] > 0:
            return other
    return seat


def legal_text(legal: dict[str, Any], game: dict[str, Any]) -> str:
    parts = []
    top = legal["max_quantity"]
    for face, floor in enumerate(legal["bid"], 1):
        if floor is not None:
            parts.append(f"{floor}..{top}×{face}")
    options = ["bid " + ", ".join(parts)] if parts else []
    if legal["dudo"]:
        options.append("dudo")
    if legal["calza"]:
        options.append("calza")
    suggestion = suggest(legal, game)
    hint = f" Suggestion: {suggestion}." if suggestion else ""
    return "Legal: " + " | ".join(options) + "." + hint


def suggest(legal: dict[str, Any], game: dict[str, Any]) -> str | None:
    """The smallest raise on the standing face (or any face), as you would type it."""
    standing = game["bids"][-1][2] if game["bids"] else None
    floors = legal["bid"]
    if standing and floors[standing - 1] is not None:
        return f"{floors[standing - 1]} {standing}"
    for face in (2, 3, 4, 5, 6, 1):
        if floors[face - 1] is not None:
            return f"{floors[face - 1]} {face}"
    return None


def parse(line: str) -> dict[str, Any] | str | None:
    """A typed command as an action, or a word the client handles itself."""
    words = line.strip().lower().split()
    if not words:
        return None
    if words[0] in ("quit", "exit", "help", "start"):
        return words[0]
    if words[0] in ("dudo", "calza"):
        return {"type": words[0]}
    if words[0] in ("left", "right"):
        return {"type": "direction", "value": -1 if words[0] == "left" else 1}
    if len(words) == 2 and all(w.isdigit() for w in words):
        return {"type": "bid", "quantity": int(words[0]), "face": int(words[1])}
    return "help"
