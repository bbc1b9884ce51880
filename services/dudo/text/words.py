"""What a text client says, in English, Spanish or German: the face names and every
line's template (:data:`WORDS`, the same keys in each language; a test holds them to it).
Spanish uses seed 003's face names (as, tonto, tren, cuadra, quina, cena); German calls
ones Pacos, as the browser client does."""

from __future__ import annotations

from .chat_words import CHAT_WORDS

LANGS = ("en", "es", "de")
FACE: dict[str, tuple[str, ...]] = {
    "en": ("one", "two", "three", "four", "five", "six"),
    "es": ("as", "tonto", "tren", "cuadra", "quina", "cena"),
    "de": ("Paco", "Zweier", "Dreier", "Vierer", "Fünfer", "Sechser"),
}
# The bot levels by name (the protocol's ``BOT_LEVELS``; a test holds every level to a
# word in every language), as the browser client calls them.
LEVEL: dict[str, dict[str, str]] = {
    "en": {"easy": "easy", "normal": "normal", "hard": "hard"},
    "es": {"easy": "fácil", "normal": "normal", "hard": "difícil"},
    "de": {"easy": "leicht", "normal": "normal", "hard": "schwer"},
}
FACES: dict[str, tuple[str, ...]] = {
    "en": ("ones", "twos", "threes", "fours", "fives", "sixes"),
    "es": ("ases", "tontos", "trenes", "cuadras", "quinas", "cenas"),
    "de": ("Pacos", "Zweier", "Dreier", "Vierer", "Fünfer", "Sechser"),
}
# Faces as people name them outside Perudo, singular and plural ("5 treses", "three
# fives", "zwei Sechsen"): parse() reads them beside FACE and FACES (issue 54, item 6).
EVERYDAY_FACES: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (("one", "ones"), ("two", "twos"), ("three", "threes"), ("four", "fours"),
           ("five", "fives"), ("six", "sixes")),
    "es": (("uno", "unos"), ("dos", "doses"), ("tres", "treses"), ("cuatro", "cuatros"),
           ("cinco", "cincos"), ("seis", "seises")),
    "de": (("Einser", "Einsen"), ("Zweier", "Zweien"), ("Dreier", "Dreien"),
           ("Vierer", "Vieren"), ("Fünfer", "Fünfen"), ("Sechser", "Sechsen")),
}  # fmt: skip
# A quantity in words, 1 to 20 ("three fives", "tres treses", "drei Fünfer"); "a", "un",
# "ein" and their kin are one.
NUMBERS: dict[str, tuple[str, ...]] = {
    "en": ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
           "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
           "eighteen", "nineteen", "twenty"),
    "es": ("uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez",
           "once", "doce", "trece", "catorce", "quince", "dieciséis", "diecisiete",
           "dieciocho", "diecinueve", "veinte"),
    "de": ("eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn",
           "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn",
           "achtzehn", "neunzehn", "zwanzig"),
}  # fmt: skip
ONE_WORDS = ("a", "an", "un", "una", "ein", "eine", "einen")

# Every word of the text, per language ({placeholders} filled by dudo.text.lines).
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "help": "commands: <quantity> <face> (a bid, e.g. 3 5 for three fives) · dudo · "
        "calza · left · right (who plays next, when asked) · start (host) · odds · table · "
        "leave · react haha (or 👍 😂 😮 😠 🤔 👏) · help · quit",
        "waiting": "Table {table}: waiting for players ({taken}/{seats})",
        "head": "Table {table} · round {round} · {dice} dice",
        "palifico": "PALIFICO: the face is locked, {ones}",
        "wild": "ones stay wild",
        "not_wild": "ones are not wild",
        "turn_mark": "← turn",
        "bot": "bot {level}",
        "bot_mark": "(bot)",
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
        "reaction": "{who}: {glyph}",
        "vacated_you": "(you let the house play {turns} turns in a row)",
        "vacated_other": "({who} let the house play {turns} turns in a row)",
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
        "chat_help": "!new [preset] [bots N] [dice D] [clock S] [odds] [dir] · !join [TABLE] · "
        "!start · "
        "!bid Q F (or just Q F) · !dudo · !calza · !dir + or - · !dice · !odds · !table · "
        "!leave · !react haha · !host NICK · !close · !lang en|es|de · !help",
        "opened": "{host} opens table {table} ({preset}, {seats} seats, {bots}): "
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
        "back": "Back: table {table} goes on (anything typed while I was away was not "
        "heard: type it again)",
        "seat_left": "{who} left: the house plays their seat (a nick is not a seat: whoever "
        "takes it next is someone else)",
        "seat_left_back": "{who} left: the house plays their seat until {who} comes back "
        "and types !join (from the same connection, before being out)",
        "house_away_you": "(you are away: the house plays for you)",
        "house_away_other": "({who} is away: the house plays for them)",
    },
    "es": {
        "help": "comandos: <cantidad> <pinta> (una puja, p. ej. 3 5 o 3 quinas) · dudo · "
        "calza · izquierda · derecha (quién sigue, cuando se pregunta) · empezar (anfitrión) "
        "· odds · mesa · dejar · reaccion haha (o 👍 😂 😮 😠 🤔 👏) · ayuda · salir",
        "waiting": "Mesa {table}: esperando jugadores ({taken}/{seats})",
        "head": "Mesa {table} · ronda {round} · {dice} dados",
        "palifico": "PALIFICO: la pinta no cambia, {ones}",
        "wild": "los ases siguen siendo comodines",
        "not_wild": "los ases no son comodines",
        "turn_mark": "← turno",
        "bot": "bot {level}",
        "bot_mark": "(bot)",
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
        "reaction": "{who}: {glyph}",
        "vacated_you": "(dejaste jugar a la casa {turns} turnos seguidos)",
        "vacated_other": "({who} dejó jugar a la casa {turns} turnos seguidos)",
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
        "chat_help": "!nueva [preset] [bots N] [dados D] [reloj S] [odds] [dir] · !unirse [MESA] · "
        "!empezar · !puja C P (o solo C P) · !dudo · !calza · !dir + o - · !dados · !odds · "
        "!mesa · !dejar · !reaccion haha · !anfitrion NICK · !cerrar · "
        "!idioma en|es|de · !ayuda",
        "opened": "{host} abre la mesa {table} ({preset}, {seats} asientos, {bots}): "
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
        "back": "De vuelta: sigue la mesa {table} (lo que escribieron mientras no estaba no "
        "llegó: escríbanlo otra vez)",
        "seat_left": "{who} se fue: la casa juega su asiento (quien tome ese nick después es "
        "otra persona)",
        "seat_left_back": "{who} se fue: la casa juega su asiento hasta que {who} vuelva y "
        "escriba !unirse (desde la misma conexión, antes de quedar fuera)",
        "house_away_you": "(no estás: la casa juega por vos)",
        "house_away_other": "({who} no está: la casa juega por su asiento)",
    },
    "de": {
        "help": "Befehle: <Anzahl> <Augen> (ein Gebot, z. B. 3 5 oder 3 Fünfer) · dudo · "
        "calza · links · rechts (wer weiterspielt, wenn gefragt) · starten (Gastgeber) · "
        "odds · tisch · verlassen · reaktion haha (oder 👍 😂 😮 😠 🤔 👏) · hilfe · beenden",
        "waiting": "Tisch {table}: wartet auf Spieler ({taken}/{seats})",
        "head": "Tisch {table} · Runde {round} · {dice} Würfel",
        "palifico": "PALIFICO: die Augenzahl bleibt, {ones}",
        "wild": "Pacos bleiben Joker",
        "not_wild": "Pacos sind keine Joker",
        "turn_mark": "← am Zug",
        "bot": "Bot {level}",
        "bot_mark": "(Bot)",
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
        "reaction": "{who}: {glyph}",
        "vacated_you": "(du hast das Haus {turns} Züge in Folge spielen lassen)",
        "vacated_other": "({who} hat das Haus {turns} Züge in Folge spielen lassen)",
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
        "chat_help": "!neu [Preset] [bots N] [würfel W] [uhr S] [odds] [dir] · "
        "!mitspielen [TISCH] · "
        "!starten · !gebot A Z (oder nur A Z) · !dudo · !calza · !dir + oder - · !würfel · "
        "!odds · !tisch · "
        "!verlassen · !reaktion haha · !gastgeber NICK · !schliessen · !sprache en|es|de · "
        "!hilfe",
        "opened": "{host} eröffnet Tisch {table} ({preset}, {seats} Plätze, {bots}): "
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
        "back": "Zurück: Tisch {table} geht weiter (was ihr geschrieben habt, während ich weg "
        "war, kam nicht an: bitte noch einmal)",
        "seat_left": "{who} ist gegangen: das Haus spielt den Platz (wer den Nick danach "
        "nimmt, ist jemand anderes)",
        "seat_left_back": "{who} ist gegangen: das Haus spielt den Platz, bis {who} "
        "zurückkommt und !mitspielen schreibt (von derselben Verbindung, bevor er raus ist)",
        "house_away_you": "(du bist nicht da: das Haus spielt für dich)",
        "house_away_other": "({who} ist nicht da: das Haus spielt den Platz)",
    },
}
for _lang, _extra in CHAT_WORDS.items():  # a chat gateway's own sentences
    WORDS[_lang].update(_extra)
