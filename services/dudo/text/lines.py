"""A table as lines of text, and typed commands as actions, in English, Spanish or German:
what a text client needs (``dudo play`` today, a chat gateway next; pure functions, no
I/O, so any text gateway can share them).

Seats are numbered from 1, as people count them; the protocol's seats are 0-based.
Spanish uses seed 003's face names (as, tonto, tren, cuadra, quina, cena); German calls
ones Pacos, as the browser client does. :func:`parse` understands the commands and face
names of every language, whichever the player reads.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from .words import EVERYDAY_FACES, FACE, FACES, LANGS, LEVEL, NUMBERS, ONE_WORDS, WORDS

HELP = WORDS["en"]["help"]
# Typed commands, in every language (parse() takes any of them; in a chat, with a "!").
_COMMANDS = {
    "quit": "quit", "exit": "quit", "salir": "quit", "beenden": "quit",
    "help": "help", "ayuda": "help", "hilfe": "help",
    "start": "start", "empezar": "start", "starten": "start",
    "join": "join", "unirse": "join", "entrar": "join", "mitspielen": "join",
    "beitreten": "join",
    "odds": "odds", "probabilidad": "odds", "chancen": "odds",
    "table": "table", "mesa": "table", "tisch": "table",
    "leave": "leave", "dejar": "leave", "verlassen": "leave",
    "dice": "dice", "dados": "dice", "wurfel": "dice",
    "close": "close", "cerrar": "close", "schliessen": "close",
}  # fmt: skip
_HOST = {"host", "anfitrion", "gastgeber"}
_REACT = {"react", "reaccion", "reaccionar", "reaktion", "reagieren"}
# The quick reactions (wire.EMOTES) as a chat draws them, and the pictures typed for them.
EMOTE_GLYPHS = {"nice": "👍", "haha": "😂", "wow": "😮", "grr": "😠", "hmm": "🤔", "clap": "👏"}
_EMOTE_WORDS = {**{name: name for name in EMOTE_GLYPHS},
                **{glyph: name for name, glyph in EMOTE_GLYPHS.items()}}  # fmt: skip
_NEW = {"new", "nueva", "nuevo", "neu"}
_LANG = {"lang", "idioma", "sprache"}
_BID = {"bid", "puja", "pujar", "apuesta", "biete", "bieten", "gebot"}
_DIR = {"dir", "direction", "direccion", "richtung"}
_BOTS = {"bots", "bot", "robots"}
_DICE = {"dice", "dados", "wurfel"}
_CLOCK = {"clock", "reloj", "uhr"}
_ODDS = {"odds", "probabilidad", "chancen"}
_DIGITS = {"bots": 2, "dice": 2, "clock": 3}  # how long each count of !new may be
_DIRECTIONS = {
    "left": -1, "izquierda": -1, "links": -1, "-": -1,
    "right": 1, "derecha": 1, "rechts": 1, "+": 1,
}  # fmt: skip


def _w(lang: str) -> dict[str, str]:
    return WORDS.get(lang, WORDS["en"])


def say(key: str, lang: str = "en", **fields: Any) -> str:
    """One sentence of the text client in ``lang`` (WORDS), its placeholders filled."""
    return _w(lang)[key].format(**fields)


def dice_text(dice: list[int]) -> str:
    return " ".join(f"[{d}]" for d in dice)


def bid_text(quantity: int, face: int, lang: str = "en") -> str:
    names = FACE if quantity == 1 else FACES
    return f"{quantity} × {names.get(lang, names['en'])[face - 1]}"


def player_label(player: dict[str, Any], lang: str = "en") -> str:
    """A player of a view by name, a bot marked so: "Hugo (bot)" (a chat's players took
    bots for people, issue 54, item 9)."""
    return f"{player['name']} {_w(lang)['bot_mark']}" if player.get("bot") else player["name"]


def _name(
    view: dict[str, Any], seat: int | None, *, you: bool = True, lang: str = "en",
    mark: bool = True,
) -> str:  # fmt: skip
    """A seat's player by name; a bot marked so unless not ``mark``, and "(you)" for the
    reader's own seat (``you``)."""
    if seat is None:
        return "?"
    players = view["players"]
    player = players[seat] if 0 <= seat < len(players) else None
    if player is None:
        label = _w(lang)["seat"].format(n=seat + 1)
    else:
        label = player_label(player, lang) if mark else player["name"]
    return f"{label} {_w(lang)['you']}" if you and seat == view["seat"] else label


def palifico_text(game: dict[str, Any], lang: str = "en") -> str:
    w = _w(lang)
    ones = w["wild"] if game["rules"].get("palifico_wild_ones") else w["not_wild"]
    return w["palifico"].format(ones=ones)


def render(view: dict[str, Any], lang: str = "en") -> str:
    """The whole table: players and their dice counts, your dice, the bids so far."""
    w = _w(lang)
    game = view["game"]
    players = view["players"]
    if game is None:
        taken = sum(1 for p in players if p)
        return w["waiting"].format(table=view["table"], taken=taken, seats=len(players))
    head = w["head"].format(table=view["table"], round=game["round"], dice=game["dice_in_play"])
    if game["palifico"] and game["phase"] != "over":
        head += f"  {palifico_text(game, lang)}"
    lines = [head]
    for seat, player in enumerate(players):
        if player is None:
            continue
        count = game["dice_counts"][seat]
        mark = f"  {w['turn_mark']}" if game["turn"] == seat and game["phase"] != "over" else ""
        level = LEVEL[lang].get(player["bot"], player["bot"])  # a newer server's, as sent
        bot = f" [{w['bot'].format(level=level)}]" if player["bot"] else ""
        shown = f"{'■' * count:<6} {count}" if count else w["out"]
        label = _name(view, seat, lang=lang, mark=False) + bot  # its level said beside it
        lines.append(f"  {seat + 1}. {label:<28} {shown}{mark}")
    if game["phase"] == "over":
        return "\n".join([*lines, *result_lines(view, lang)])
    if game.get("dice"):
        lines.append(w["your_dice"].format(dice=dice_text(game["dice"])))
    if game["bids"]:
        bids = ", ".join(f"{_name(view, s, lang=lang)} {q}×{f}" for s, q, f in game["bids"])
        lines.append(w["bids"].format(bids=bids))
    return "\n".join(lines)


def result_lines(view: dict[str, Any], lang: str = "en") -> list[str]:
    """A finished game: the winner, and every player's place."""
    w, game = _w(lang), view["game"]
    names = ", ".join(_name(view, s, lang=lang) for s in game["standings"])
    return [
        w["winner"].format(name=_name(view, game["winner"], lang=lang)),
        w["standings"].format(names=names),
    ]


def event_line(view: dict[str, Any], event: dict[str, Any], lang: str = "en") -> str | None:
    """One thing that happened, as a line (None: shown some other way, or not at all)."""
    w = _w(lang)
    kind = event["type"]
    seat = event.get("seat")
    you = seat is not None and seat == view["seat"]
    who = _name(view, seat, lang=lang)
    pick = "_you" if you else "_other"
    if kind == "bid":
        return w["bid" + pick].format(who=who, bid=bid_text(event["quantity"], event["face"], lang))
    if kind in ("dudo", "calza"):
        return w["call" + pick].format(who=who, call=kind.capitalize())
    if kind == "direction":
        game = view["game"]
        if not game:
            return None
        return w["dir" + pick].format(who=who, next=_name(view, game["turn"], lang=lang))
    if kind == "house_bot":  # the clock ran out, or they are away (left, or long idle)
        player = view["players"][seat] if seat is not None else None
        away = "_away" if player and player.get("away") else ""
        return w["house" + away + pick].format(who=who)
    if kind == "vacated":  # why the `eliminated` that follows
        return w["vacated" + pick].format(who=who, turns=event["turns"])
    if kind == "eliminated":
        return w["out" + pick].format(who=who)
    if kind == "reaction":
        return w["reaction"].format(who=who, glyph=EMOTE_GLYPHS.get(event["emote"], "?"))
    return None


def reveal_text(view: dict[str, Any], lang: str = "en") -> str:
    """The round that just ended: every hand, the count, who lost or won a die."""
    w = _w(lang)
    last = view["game"]["last_round"]
    bidder, quantity, face = last["bid"]
    lines = [
        w["reveal"].format(
            call=last["call"].upper(),
            caller=_name(view, last["caller"], lang=lang),
            bidder=_name(view, bidder, lang=lang),
            bid=bid_text(quantity, face, lang),
        )
    ]
    for seat, hand in enumerate(last["dice"]):
        if hand:
            lines.append(f"    {_name(view, seat, lang=lang):<20} {dice_text(hand)}")
    outcome = [w["counted"].format(count=last["count"])]
    if last["loser"] is not None:
        outcome.append(w["loses"].format(name=_name(view, last["loser"], lang=lang)))
    if last["gainer"] is not None:
        outcome.append(w["gains"].format(name=_name(view, last["gainer"], lang=lang)))
    lines.append("    " + "; ".join(outcome))
    return "\n".join(lines)


def turn_text(view: dict[str, Any], lang: str = "en") -> str:
    """What to decide: the bid to beat, what is legal, a suggestion, your odds."""
    w = _w(lang)
    game = view["game"]
    legal = game["legal"]
    if legal["direction"]:
        left = _name(view, _next(game, view["seat"], -1), you=False, lang=lang)
        right = _name(view, _next(game, view["seat"], 1), you=False, lang=lang)
        return w["ask_dir"].format(left=left, right=right)
    standing = game["bids"][-1] if game["bids"] else None
    beat = (
        w["to_beat"].format(
            bid=bid_text(standing[1], standing[2], lang),
            who=_name(view, standing[0], lang=lang, mark=False),  # in brackets already
        )
        if standing
        else w["opens"]
    )
    text = w["your_turn"].format(beat=beat, legal=legal_text(legal, game, lang))
    odds = game.get("odds")
    if odds and standing and odds.get("bid_true") is not None:
        text += w["odds"].format(percent=round(odds["bid_true"] * 100))
    return text


def _next(game: dict[str, Any], seat: int, step: int) -> int:
    counts = game["dice_counts"]
    for i in range(1, len(counts)):
        other = (seat + step * i) % len(counts)
        if counts[other] > 0:
            return other
    return seat


def legal_text(legal: dict[str, Any], game: dict[str, Any], lang: str = "en") -> str:
    w = _w(lang)
    parts = []
    top = legal["max_quantity"]
    for face, floor in enumerate(legal["bid"], 1):
        if floor is not None:
            parts.append(f"{floor}..{top}×{face}")
    options = [w["bid_range"].format(ranges=", ".join(parts))] if parts else []
    if legal["dudo"]:
        options.append("dudo")
    if legal["calza"]:
        options.append("calza")
    suggestion = suggest(legal, game)
    hint = w["suggestion"].format(move=suggestion) if suggestion else ""
    return w["legal"].format(options=" | ".join(options)) + hint


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


def _plain(word: str) -> str:
    """Lower case, without accents or umlauts: "Fünfer" and "funfer" are one word."""
    decomposed = unicodedata.normalize("NFKD", word.lower().replace("ü", "u"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


# Face names of every language, singular and plural, as typed: "fives", "quinas", "fünfer",
# and as people say them outside Perudo: "treses", "doses", "Sechsen".
_FACE_WORDS = {
    **{_plain(name): face for names in EVERYDAY_FACES.values()
       for face, pair in enumerate(names, 1) for name in pair},
    **{_plain(name): face for table in (FACE, FACES) for names in table.values()
       for face, name in enumerate(names, 1)},
}  # fmt: skip
_DIGIT_FACES = frozenset("123456")
# Quantities in words: "three fives", "tres treses", "drei Fünfer", "ein Paco".
_NUMBER_WORDS = {
    **{_plain(word): n for words in NUMBERS.values() for n, word in enumerate(words, 1)},
    **dict.fromkeys(ONE_WORDS, 1),
}


def parse(line: str) -> dict[str, Any] | str | None:
    """A typed command: an action (a dict with ``type``), a command with arguments (a
    dict with ``command``: ``new``, ``lang``; ``usage`` with ``of``, a known command
    typed wrong; ``unknown`` with ``word``), or a word the client handles itself
    (``quit``, ``help``, ``start``, ``join``, ``odds``, ``table``, ``leave``, ``dice``);
    None for nothing. Words of every language are understood, with or without a leading "!" (as
    chats type them). A bid is a quantity and a face, as a number or a face name in any
    language ("3 5", "3 fives", "3 quinas", "3 Fünfer"; "3 x 5" and "bid 3 5" too)."""
    words = [w for w in _plain(line).split() if w not in ("x", "×", "*")]
    if words and words[0].startswith("!"):
        words[0] = words[0][1:]
        if not words[0]:
            words = words[1:]
    if not words:
        return None
    head = words[0]
    known = _parse_command(head, words[1:])
    if known is not None:
        return known
    bidding = head in _BID or (head.isascii() and head.isdigit())
    bid = _parse_bid(words[1:] if head in _BID else words)
    if bid is not None:
        return bid
    if bidding:
        return _usage("bid")
    return {"command": "unknown", "word": head[:20]}


def _parse_command(head: str, rest: list[str]) -> dict[str, Any] | str | None:
    """A command by its first word, with its arguments ``rest``: what :func:`parse`
    returns for it (its usage when typed wrong); None: no command starts so."""
    one = rest[0] if len(rest) == 1 else None  # the one argument most commands take
    if head in _COMMANDS:
        return _COMMANDS[head]
    if head in ("dudo", "calza"):
        return {"type": head}
    if head in _DIRECTIONS and not rest:
        return {"type": "direction", "value": _DIRECTIONS[head]}
    if head in _DIR:
        value = _DIRECTIONS.get(one) if one is not None else None
        return {"type": "direction", "value": value} if value is not None else _usage("dir")
    if head in _NEW:
        return _parse_new(rest)
    if head in _REACT:  # a quick reaction at the table: "!react haha", "!react 😂"
        emote = _EMOTE_WORDS.get(one) if one is not None else None
        return {"command": "react", "emote": emote} if emote else _usage("react")
    if head in _HOST:  # hand an open table to another player: "!host ben"
        return {"command": "host", "nick": one} if one is not None else _usage("host")
    if head in _LANG:
        return {"command": "lang", "lang": one} if one in LANGS else _usage("lang")
    return None


def _parse_bid(words: list[str]) -> dict[str, Any] | None:
    """A bid, "3 5", "three fives", "tres quinas"; its usage for a face no die has
    ("4 7"); None: not a bid."""
    if len(words) != 2 or not (_number(words[0], 3) or words[0] in _NUMBER_WORDS):
        return None
    quantity = int(words[0]) if _number(words[0], 3) else _NUMBER_WORDS[words[0]]
    if words[1].isascii() and words[1].isdigit():  # "4 7": a die has six faces
        if words[1] not in _DIGIT_FACES:
            return _usage("face")
        return {"type": "bid", "quantity": quantity, "face": int(words[1])}
    face = _FACE_WORDS.get(words[1])
    return {"type": "bid", "quantity": quantity, "face": face} if face is not None else None


def _usage(command: str) -> dict[str, str]:
    """A known command typed wrong: its usage line is the answer, not the whole help."""
    return {"command": "usage", "of": command}


def _number(word: str, digits: int) -> bool:
    """A count as people type it: plain digits, no more than ``digits`` of them."""
    return word.isascii() and word.isdigit() and len(word) <= digits


def _parse_new(words: list[str]) -> dict[str, Any]:
    """``new [preset] [bots N] [dice D] [clock S] [odds] [dir]`` (also "N bots", "D
    dice"): a table's preset, its bot seats, the dice each player starts with, its turn
    clock in seconds (None: the preset's, the gateway's clock), the odds shown to each
    player (``assisted``) and the loser choosing who plays next."""
    found: dict[str, Any] = {
        "command": "new", "preset": None, "bots": 0, "dice": None, "clock": None,
        "odds": False, "dir": False,
    }  # fmt: skip
    counted = {**{w: "bots" for w in _BOTS}, **{w: "dice" for w in _DICE}}
    counted.update({w: "clock" for w in _CLOCK})
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word in counted and rest and _number(rest[0], _DIGITS[counted[word]]):
            found[counted[word]] = int(rest.pop(0))
        elif rest and rest[0] in counted and _number(word, _DIGITS[counted[rest[0]]]):
            found[counted[rest.pop(0)]] = int(word)
        elif word in _ODDS or word in _DIR:
            found["odds" if word in _ODDS else "dir"] = True
        elif found["preset"] is None and len(word) <= 32 and not word.isdigit() and (
            word not in counted
        ):
            found["preset"] = word
        else:
            return _usage("new")
    return found


def odds_text(view: dict[str, Any], lang: str = "en") -> str:
    """A seat's odds of the bid to beat, from its own view (assisted tables only: a table
    that plays without odds gives none, and none are made up here)."""
    w = _w(lang)
    game = view.get("game") or {}
    odds = game.get("odds")
    assisted = (game.get("rules") or {}).get("assisted", odds is not None)
    if not assisted:
        return w["no_odds"]
    if not odds or not game.get("bids") or odds.get("bid_true") is None:
        return w["no_bid"]  # odds come with a bid to beat (none while choosing a direction)
    _, quantity, face = game["bids"][-1]
    return w["odds_line"].format(
        bid=bid_text(quantity, face, lang), percent=round(odds["bid_true"] * 100)
    )


def summary_line(view: dict[str, Any], lang: str = "en") -> str:
    """A round in one line, public only (for chats): the round, the dice in play, and each
    player's count, whose turn marked."""
    game = view["game"]
    counts = []
    for seat, player in enumerate(view["players"]):
        if player is None:
            continue
        n = game["dice_counts"][seat]
        mark = " ←" if game["turn"] == seat and game["phase"] != "over" else ""
        counts.append(f"{_name(view, seat, lang=lang)} {n if n else _w(lang)['out']}{mark}")
    line = _w(lang)["round_line"].format(
        round=game["round"], dice=game["dice_in_play"], counts=", ".join(counts)
    )
    if game["palifico"] and game["phase"] != "over":
        line += f" · {palifico_text(game, lang)}"
    return line
