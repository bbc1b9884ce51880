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

LANGS = ("en", "es", "de")
FACE: dict[str, tuple[str, ...]] = {
    "en": ("one", "two", "three", "four", "five", "six"),
    "es": ("as", "tonto", "tren", "cuadra", "quina", "cena"),
    "de": ("Paco", "Zweier", "Dreier", "Vierer", "Fünfer", "Sechser"),
}
FACES: dict[str, tuple[str, ...]] = {
    "en": ("ones", "twos", "threes", "fours", "fives", "sixes"),
    "es": ("ases", "tontos", "trenes", "cuadras", "quinas", "cenas"),
    "de": ("Pacos", "Zweier", "Dreier", "Vierer", "Fünfer", "Sechser"),
}
# Every word of the text, per language ({placeholders} filled by the functions below).
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "help": "commands: <quantity> <face> (a bid, e.g. 3 5 for three fives) · dudo · "
        "calza · left · right (who plays next, when asked) · start (host) · odds · table · "
        "leave · help · quit",
        "waiting": "Table {table}: waiting for players ({taken}/{seats})",
        "head": "Table {table} · round {round} · {dice} dice",
        "palifico": "PALIFICO: the face is locked, {ones}",
        "wild": "ones stay wild",
        "not_wild": "ones are not wild",
        "turn_mark": "← turn",
        "bot": "bot {level}",
        "out": "out",
        "you": "(you)",
        "seat": "seat {n}",
        "winner": "Winner: {name}",
        "standings": "Standings: {names}",
        "your_dice": "Your dice: {dice}",
        "bids": "Bids: {bids}",
        "bid_you": "You bid {bid}",
        "bid_other": "{who} bids {bid}",
        "call_you": "You call {call}!",
        "call_other": "{who} calls {call}!",
        "dir_you": "You choose: {next} plays next",
        "dir_other": "{who} chooses: {next} plays next",
        "house_you": "(the clock ran out: the house plays for you)",
        "house_other": "(the clock ran out: the house plays for {who})",
        "out_you": "You are out.",
        "out_other": "{who} is out.",
        "reveal": "— {call} by {caller} on {bidder}'s {bid}",
        "counted": "{count} counted",
        "loses": "{name} loses a die",
        "gains": "{name} wins a die back",
        "ask_dir": "Your turn. Who plays next? left: {left} · right: {right}",
        "to_beat": "To beat: {bid} ({who}). ",
        "opens": "You open the round. ",
        "your_turn": "Your turn. {beat}{legal}",
        "odds": " Odds: the bid to beat is true {percent}%.",
        "legal": "Legal: {options}.",
        "bid_range": "bid {ranges}",
        "suggestion": " Suggestion: {move}.",
        "name?": "Your name?",
        "no_table": "No open table: creating one against two bots.",
        "table_line": "  {i}. {host}'s table · {preset} · {taken}/{seats}",
        "pick": "Number to join, or 'new' for a table against two bots:",
        "created": "Table {table} created; you are seat {seat} of {seats}.",
        "connected": "Connected to table {table} as {seat}. {help}",
        "watching": "watching",
        "chat_help": "!new [preset] [bots N] [dice D] · !join · !start · !bid Q F (or just Q F) · "
        "!dudo · !calza · !dir + or - · !odds · !table · !leave · !lang en|es|de · !help",
        "opened": "{host} opens table {table} ({preset}, {seats} seats, {bots} bots): "
        "!join to play; {host}, !start when ready",
        "joins": "{who} joins ({taken}/{seats})",
        "leaves": "{who} leaves ({taken}/{seats})",
        "begins": "The game begins: {names}",
        "start_when_seated": "{who}: the bots are taking their seats; the game begins when "
        "they sit (!start again: at once)",
        "round_line": "Round {round} · {dice} dice: {counts}",
        "turn_call": "{who}: your turn ({standing})",
        "open_round": "open the round",
        "choose_dir": "choose who plays next: !dir + or -",
        "reminder": "{who}: {seconds} s left, then the house plays for you",
        "dice_round": "Table {table} · round {round} · your dice: {dice}",
        "no_table_here": "No table in this channel: !new opens one",
        "table_busy": "Table {table} is already being played here: !table",
        "not_seated": "{who}: you have no seat at this table (!join)",
        "no_odds": "This table plays without odds (assisted is off)",
        "no_bid": "There is no bid to beat yet",
        "odds_line": "Odds: {bid} is true {percent}%",
        "refused": "{who}: refused ({code}): {message}",
        "lang_set": "Language: English",
        "back": "Back: table {table} goes on",
        "seat_left": "{who} left: the house plays their seat (a nick is not a seat: whoever "
        "takes it next is someone else)",
    },
    "es": {
        "help": "comandos: <cantidad> <pinta> (una puja, p. ej. 3 5 o 3 quinas) · dudo · "
        "calza · izquierda · derecha (quién sigue, cuando se pregunta) · empezar (anfitrión) "
        "· odds · mesa · dejar · ayuda · salir",
        "waiting": "Mesa {table}: esperando jugadores ({taken}/{seats})",
        "head": "Mesa {table} · ronda {round} · {dice} dados",
        "palifico": "PALIFICO: la pinta no cambia, {ones}",
        "wild": "los ases siguen siendo comodines",
        "not_wild": "los ases no son comodines",
        "turn_mark": "← turno",
        "bot": "bot {level}",
        "out": "fuera",
        "you": "(vos)",
        "seat": "asiento {n}",
        "winner": "Gana: {name}",
        "standings": "Posiciones: {names}",
        "your_dice": "Tus dados: {dice}",
        "bids": "Pujas: {bids}",
        "bid_you": "Pujás {bid}",
        "bid_other": "{who} puja {bid}",
        "call_you": "¡Cantás {call}!",
        "call_other": "¡{who} canta {call}!",
        "dir_you": "Elegís: sigue {next}",
        "dir_other": "{who} elige: sigue {next}",
        "house_you": "(se acabó el tiempo: la casa juega por vos)",
        "house_other": "(se acabó el tiempo: la casa juega por {who})",
        "out_you": "Quedaste fuera.",
        "out_other": "{who} queda fuera.",
        "reveal": "— {call} de {caller} a la puja de {bidder}: {bid}",
        "counted": "hay {count}",
        "loses": "{name} pierde un dado",
        "gains": "{name} recupera un dado",
        "ask_dir": "Tu turno. ¿Quién sigue? izquierda: {left} · derecha: {right}",
        "to_beat": "A superar: {bid} ({who}). ",
        "opens": "Abrís la ronda. ",
        "your_turn": "Tu turno. {beat}{legal}",
        "odds": " Probabilidad de que la puja a superar sea cierta: {percent}%.",
        "legal": "Posible: {options}.",
        "bid_range": "pujar {ranges}",
        "suggestion": " Sugerencia: {move}.",
        "name?": "¿Tu nombre?",
        "no_table": "No hay mesas abiertas: se crea una contra dos bots.",
        "table_line": "  {i}. Mesa de {host} · {preset} · {taken}/{seats}",
        "pick": "Número de mesa, o 'new' para una mesa contra dos bots:",
        "created": "Mesa {table} creada; sos el asiento {seat} de {seats}.",
        "connected": "Conectado a la mesa {table} como {seat}. {help}",
        "watching": "espectador",
        "chat_help": "!nueva [preset] [bots N] [dados D] · !unirse · !empezar · "
        "!puja C P (o solo C P) · !dudo · !calza · !dir + o - · !odds · !mesa · !dejar · "
        "!idioma en|es|de · !ayuda",
        "opened": "{host} abre la mesa {table} ({preset}, {seats} asientos, {bots} bots): "
        "!unirse para jugar; {host}, !empezar cuando estén",
        "joins": "{who} se sienta ({taken}/{seats})",
        "leaves": "{who} se va ({taken}/{seats})",
        "begins": "Empieza el juego: {names}",
        "start_when_seated": "{who}: los bots se están sentando; el juego empieza cuando "
        "se sienten (!start otra vez: ya)",
        "round_line": "Ronda {round} · {dice} dados: {counts}",
        "turn_call": "{who}: te toca ({standing})",
        "open_round": "abrís la ronda",
        "choose_dir": "elegí quién sigue: !dir + o -",
        "reminder": "{who}: quedan {seconds} s, después juega la casa por vos",
        "dice_round": "Mesa {table} · ronda {round} · tus dados: {dice}",
        "no_table_here": "No hay mesa en este canal: !nueva abre una",
        "table_busy": "Ya se juega la mesa {table} acá: !mesa",
        "not_seated": "{who}: no tenés asiento en esta mesa (!unirse)",
        "no_odds": "Esta mesa juega sin probabilidades (sin modo asistido)",
        "no_bid": "Todavía no hay puja a superar",
        "odds_line": "Probabilidad: {bid} es cierta {percent}%",
        "refused": "{who}: rechazado ({code}): {message}",
        "lang_set": "Idioma: español",
        "back": "De vuelta: sigue la mesa {table}",
        "seat_left": "{who} se fue: la casa juega su asiento (quien tome ese nick después es "
        "otra persona)",
    },
    "de": {
        "help": "Befehle: <Anzahl> <Augen> (ein Gebot, z. B. 3 5 oder 3 Fünfer) · dudo · "
        "calza · links · rechts (wer weiterspielt, wenn gefragt) · starten (Gastgeber) · "
        "odds · tisch · verlassen · hilfe · beenden",
        "waiting": "Tisch {table}: wartet auf Spieler ({taken}/{seats})",
        "head": "Tisch {table} · Runde {round} · {dice} Würfel",
        "palifico": "PALIFICO: die Augenzahl bleibt, {ones}",
        "wild": "Pacos bleiben Joker",
        "not_wild": "Pacos sind keine Joker",
        "turn_mark": "← am Zug",
        "bot": "Bot {level}",
        "out": "raus",
        "you": "(du)",
        "seat": "Platz {n}",
        "winner": "Gewinner: {name}",
        "standings": "Platzierung: {names}",
        "your_dice": "Deine Würfel: {dice}",
        "bids": "Gebote: {bids}",
        "bid_you": "Du bietest {bid}",
        "bid_other": "{who} bietet {bid}",
        "call_you": "Du rufst {call}!",
        "call_other": "{who} ruft {call}!",
        "dir_you": "Du wählst: {next} spielt weiter",
        "dir_other": "{who} wählt: {next} spielt weiter",
        "house_you": "(die Zeit ist um: das Haus spielt für dich)",
        "house_other": "(die Zeit ist um: das Haus spielt für {who})",
        "out_you": "Du bist raus.",
        "out_other": "{who} ist raus.",
        "reveal": "— {call} von {caller} auf das Gebot von {bidder}: {bid}",
        "counted": "{count} gezählt",
        "loses": "{name} verliert einen Würfel",
        "gains": "{name} bekommt einen Würfel zurück",
        "ask_dir": "Du bist dran. Wer spielt weiter? links: {left} · rechts: {right}",
        "to_beat": "Zu überbieten: {bid} ({who}). ",
        "opens": "Du eröffnest die Runde. ",
        "your_turn": "Du bist dran. {beat}{legal}",
        "odds": " Wahrscheinlichkeit, dass das Gebot stimmt: {percent}%.",
        "legal": "Möglich: {options}.",
        "bid_range": "bieten {ranges}",
        "suggestion": " Vorschlag: {move}.",
        "name?": "Dein Name?",
        "no_table": "Kein offener Tisch: einer gegen zwei Bots wird eröffnet.",
        "table_line": "  {i}. Tisch von {host} · {preset} · {taken}/{seats}",
        "pick": "Nummer zum Beitreten, oder 'new' für einen Tisch gegen zwei Bots:",
        "created": "Tisch {table} eröffnet; du bist Platz {seat} von {seats}.",
        "connected": "Verbunden mit Tisch {table} als {seat}. {help}",
        "watching": "Zuschauer",
        "chat_help": "!neu [Preset] [bots N] [würfel W] · !mitspielen · !starten · "
        "!gebot A Z (oder nur A Z) · !dudo · !calza · !dir + oder - · !odds · !tisch · "
        "!verlassen · !sprache en|es|de · !hilfe",
        "opened": "{host} eröffnet Tisch {table} ({preset}, {seats} Plätze, {bots} Bots): "
        "!mitspielen zum Mitspielen; {host}, !starten wenn alle da sind",
        "joins": "{who} setzt sich ({taken}/{seats})",
        "leaves": "{who} geht ({taken}/{seats})",
        "begins": "Das Spiel beginnt: {names}",
        "start_when_seated": "{who}: die Bots setzen sich; das Spiel beginnt, sobald sie "
        "sitzen (!start noch einmal: sofort)",
        "round_line": "Runde {round} · {dice} Würfel: {counts}",
        "turn_call": "{who}: du bist dran ({standing})",
        "open_round": "eröffne die Runde",
        "choose_dir": "wähle, wer weiterspielt: !dir + oder -",
        "reminder": "{who}: noch {seconds} s, dann spielt das Haus für dich",
        "dice_round": "Tisch {table} · Runde {round} · deine Würfel: {dice}",
        "no_table_here": "Kein Tisch in diesem Kanal: !neu eröffnet einen",
        "table_busy": "Hier wird schon Tisch {table} gespielt: !tisch",
        "not_seated": "{who}: du hast keinen Platz an diesem Tisch (!mitspielen)",
        "no_odds": "Dieser Tisch spielt ohne Wahrscheinlichkeiten (ohne Assistenz)",
        "no_bid": "Es gibt noch kein Gebot zu überbieten",
        "odds_line": "Wahrscheinlichkeit: {bid} stimmt zu {percent}%",
        "refused": "{who}: abgelehnt ({code}): {message}",
        "lang_set": "Sprache: Deutsch",
        "back": "Zurück: Tisch {table} geht weiter",
        "seat_left": "{who} ist gegangen: das Haus spielt den Platz (wer den Nick danach "
        "nimmt, ist jemand anderes)",
    },
}
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
}  # fmt: skip
_NEW = {"new", "nueva", "nuevo", "neu"}
_LANG = {"lang", "idioma", "sprache"}
_BID = {"bid", "puja", "pujar", "apuesta", "biete", "bieten", "gebot"}
_DIR = {"dir", "direction", "direccion", "richtung"}
_BOTS = {"bots", "bot", "robots"}
_DICE = {"dice", "dados", "wurfel"}
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


def _name(view: dict[str, Any], seat: int | None, *, you: bool = True, lang: str = "en") -> str:
    if seat is None:
        return "?"
    players = view["players"]
    player = players[seat] if 0 <= seat < len(players) else None
    label = player["name"] if player else _w(lang)["seat"].format(n=seat + 1)
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
        bot = f" [{w['bot'].format(level=player['bot'])}]" if player["bot"] else ""
        shown = f"{'■' * count:<6} {count}" if count else w["out"]
        lines.append(f"  {seat + 1}. {_name(view, seat, lang=lang) + bot:<28} {shown}{mark}")
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
    if kind == "house_bot":
        return w["house" + pick].format(who=who)
    if kind == "eliminated":
        return w["out" + pick].format(who=who)
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
            bid=bid_text(standing[1], standing[2], lang), who=_name(view, standing[0], lang=lang)
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


# Face names of every language, singular and plural, as typed: "fives", "quinas", "fünfer".
_FACE_WORDS = {
    _plain(name): face
    for table in (FACE, FACES)
    for names in table.values()
    for face, name in enumerate(names, 1)
}


def parse(line: str) -> dict[str, Any] | str | None:
    """A typed command: an action (a dict with ``type``), a command with arguments (a
    dict with ``command``: ``new``, ``lang``), or a word the client handles itself
    (``quit``, ``help``, ``start``, ``join``, ``odds``, ``table``, ``leave``); None for
    nothing. Words of every language are understood, with or without a leading "!" (as
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
    if head in _COMMANDS:
        return _COMMANDS[head]
    if head in ("dudo", "calza"):
        return {"type": head}
    if head in _DIRECTIONS and len(words) == 1:
        return {"type": "direction", "value": _DIRECTIONS[head]}
    if head in _DIR:
        value = _DIRECTIONS.get(words[1]) if len(words) == 2 else None
        return {"type": "direction", "value": value} if value is not None else "help"
    if head in _NEW:
        return _parse_new(words[1:])
    if head in _LANG:
        wanted = words[1] if len(words) == 2 else None
        return {"command": "lang", "lang": wanted} if wanted in LANGS else "help"
    if head in _BID:
        words = words[1:]
    if len(words) == 2 and _number(words[0], 3):
        face = int(words[1]) if _number(words[1], 1) else _FACE_WORDS.get(words[1])
        if face is not None:
            return {"type": "bid", "quantity": int(words[0]), "face": face}
    return "help"


def _number(word: str, digits: int) -> bool:
    """A count as people type it: plain digits, no more than ``digits`` of them."""
    return word.isascii() and word.isdigit() and len(word) <= digits


def _parse_new(words: list[str]) -> dict[str, Any] | str:
    """``new [preset] [bots N] [dice D]`` (also "N bots", "D dice"): a table's preset, its
    bot seats and the dice each player starts with (None: the preset's)."""
    found: dict[str, Any] = {"command": "new", "preset": None, "bots": 0, "dice": None}
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word in (_BOTS | _DICE) and rest and _number(rest[0], 2):
            found["bots" if word in _BOTS else "dice"] = int(rest.pop(0))
        elif _number(word, 2) and rest and rest[0] in (_BOTS | _DICE):
            found["bots" if rest.pop(0) in _BOTS else "dice"] = int(word)
        elif found["preset"] is None and len(word) <= 32 and not word.isdigit() and (
            word not in (_BOTS | _DICE)
        ):
            found["preset"] = word
        else:
            return "help"
    return found


def odds_text(view: dict[str, Any], lang: str = "en") -> str:
    """A seat's odds of the bid to beat, from its own view (assisted tables only: a table
    that plays without odds gives none, and none are made up here)."""
    w = _w(lang)
    game = view.get("game") or {}
    odds = game.get("odds")
    if not odds:
        return w["no_odds"]
    if not game.get("bids") or odds.get("bid_true") is None:
        return w["no_bid"]
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
