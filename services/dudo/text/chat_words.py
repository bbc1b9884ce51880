"""What a chat gateway says besides the table itself: usage lines, refusals in the
player's words, and the gateway's own news (back after a restart, a table left behind).
Merged into :data:`dudo.text.words.WORDS`; every language has every key, with the same
placeholders (tests/test_play_text.py).

Refusals are keyed ``err_<code>`` by the protocol's and the rules' error codes, and
name people, never seat numbers: ``{who}`` typed it, ``{turn}`` is whose turn it is,
``{host}`` the table's host, ``{bid}`` the bid to beat, ``{dice}`` the dice in play.
A code without a sentence of its own is said as ``refused_code`` (the code alone: the
tables' own messages are English, for programmers)."""

from __future__ import annotations

CHAT_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "one_bot": "1 bot",
        "n_bots": "{n} bots",
        "the_host": "the host",
        "no_dice": "{who}: you have no dice in play right now",
        "usage_bid": "{who}: usage: !bid Q F, for example !bid 3 5 (three fives) · !help",
        "usage_dir": "{who}: usage: !dir + (to your right) or !dir - (to your left)",
        "usage_new": "{who}: usage: !new [preset] [bots N] [dice D] [clock S] [odds] [dir]",
        "usage_lang": "{who}: usage: !lang en, !lang es or !lang de",
        "unknown_command": "{who}: there is no command {word} · !help lists them",
        "game_over_new": "{who}: this game is over: !new opens another table",
        "back_online": "Back on the channel: table {table} goes on (anything typed while I "
        "was away was not heard: type it again)",
        "standing_bid": "to beat: {bid} by {who}",
        "no_bid_yet": "no bid yet",
        "left_behind": "Nobody here plays table {table} any more: it is left to the house",
        "refused_code": "{who}: refused ({code})",
        "err_not_your_turn": "{who}: not your turn: it is {turn}'s",
        "err_bid_not_higher": "{who}: that does not beat {bid}",
        "err_bid_out_of_range": "{who}: there are only {dice} dice in play",
        "err_opening_on_ones": "{who}: the round cannot open on ones here",
        "err_palifico_face_locked": "{who}: palifico round: bids stay on the face of {bid}",
        "err_no_bid_yet": "{who}: there is no bid to call yet: open the round with a bid",
        "err_calza_not_allowed": "{who}: calza is not allowed now",
        "err_direction_required": "{who}: first choose who plays next: !dir + or -",
        "err_game_over": "{who}: this game is over: !new opens another table",
        "err_game_not_started": "{who}: the game has not begun: {host} starts it with !start",
        "err_game_started": "{who}: the game has begun: wait for the next table",
        "err_not_host": "{who}: only {host} can start this table",
        "err_table_full": "{who}: the table is full",
        "err_too_few_players": "{who}: two players are needed to start",
        "err_not_seated": "{who}: you have no seat at this table (!join)",
        "err_paused": "{who}: the table is paused",
        "err_rate_limited": "{who}: too fast: wait a moment and try again",
        "err_bad_rules": "{who}: a table cannot be made so: !new [preset] [bots N] [dice D] "
        "[clock S]",
    },
    "es": {
        "one_bot": "1 bot",
        "n_bots": "{n} bots",
        "the_host": "quien abrió la mesa",
        "no_dice": "{who}: ahora no tenés dados en juego",
        "usage_bid": "{who}: uso: !puja C P, por ejemplo !puja 3 5 (tres quinas) · !ayuda",
        "usage_dir": "{who}: uso: !dir + (a tu derecha) o !dir - (a tu izquierda)",
        "usage_new": "{who}: uso: !nueva [preset] [bots N] [dados D] [reloj S] [odds] [dir]",
        "usage_lang": "{who}: uso: !idioma en, !idioma es o !idioma de",
        "unknown_command": "{who}: no existe el comando {word} · !ayuda los lista",
        "game_over_new": "{who}: este juego terminó: !nueva abre otra mesa",
        "back_online": "De vuelta en el canal: sigue la mesa {table} (lo que escribieron "
        "mientras no estaba no llegó: escríbanlo otra vez)",
        "standing_bid": "a superar: {bid} de {who}",
        "no_bid_yet": "todavía sin puja",
        "left_behind": "Nadie de acá juega más la mesa {table}: queda para la casa",
        "refused_code": "{who}: rechazado ({code})",
        "err_not_your_turn": "{who}: no es tu turno: le toca a {turn}",
        "err_bid_not_higher": "{who}: eso no supera {bid}",
        "err_bid_out_of_range": "{who}: hay solo {dice} dados en juego",
        "err_opening_on_ones": "{who}: acá la ronda no se abre con ases",
        "err_palifico_face_locked": "{who}: ronda palifico: las pujas siguen en la pinta de {bid}",
        "err_no_bid_yet": "{who}: todavía no hay puja que dudar: abrí la ronda con una puja",
        "err_calza_not_allowed": "{who}: ahora no se puede calzar",
        "err_direction_required": "{who}: primero elegí quién sigue: !dir + o -",
        "err_game_over": "{who}: este juego terminó: !nueva abre otra mesa",
        "err_game_not_started": "{who}: el juego no empezó: {host} lo empieza con !empezar",
        "err_game_started": "{who}: el juego ya empezó: esperá la próxima mesa",
        "err_not_host": "{who}: solo {host} puede empezar esta mesa",
        "err_table_full": "{who}: la mesa está llena",
        "err_too_few_players": "{who}: hacen falta dos jugadores para empezar",
        "err_not_seated": "{who}: no tenés asiento en esta mesa (!unirse)",
        "err_paused": "{who}: la mesa está en pausa",
        "err_rate_limited": "{who}: muy rápido: esperá un momento y probá otra vez",
        "err_bad_rules": "{who}: no se puede armar una mesa así: !nueva [preset] [bots N] "
        "[dados D] [reloj S]",
    },
    "de": {
        "one_bot": "1 Bot",
        "n_bots": "{n} Bots",
        "the_host": "wer den Tisch eröffnet hat",
        "no_dice": "{who}: du hast gerade keine Würfel im Spiel",
        "usage_bid": "{who}: so geht's: !gebot A Z, zum Beispiel !gebot 3 5 (drei Fünfer) · !hilfe",
        "usage_dir": "{who}: so geht's: !dir + (nach rechts) oder !dir - (nach links)",
        "usage_new": "{who}: so geht's: !neu [Preset] [bots N] [würfel W] [uhr S] [odds] [dir]",
        "usage_lang": "{who}: so geht's: !sprache en, !sprache es oder !sprache de",
        "unknown_command": "{who}: den Befehl {word} gibt es nicht · !hilfe zeigt alle",
        "game_over_new": "{who}: dieses Spiel ist vorbei: !neu eröffnet einen neuen Tisch",
        "back_online": "Wieder im Kanal: Tisch {table} geht weiter (was ihr geschrieben habt, "
        "während ich weg war, kam nicht an: bitte noch einmal)",
        "standing_bid": "zu überbieten: {bid} von {who}",
        "no_bid_yet": "noch kein Gebot",
        "left_behind": "Niemand von hier spielt Tisch {table} mehr: das Haus spielt ihn",
        "refused_code": "{who}: abgelehnt ({code})",
        "err_not_your_turn": "{who}: du bist nicht dran: {turn} ist dran",
        "err_bid_not_higher": "{who}: das überbietet {bid} nicht",
        "err_bid_out_of_range": "{who}: es sind nur {dice} Würfel im Spiel",
        "err_opening_on_ones": "{who}: die Runde darf hier nicht mit Pacos eröffnet werden",
        "err_palifico_face_locked": "{who}: Palifico-Runde: die Gebote bleiben bei der "
        "Augenzahl von {bid}",
        "err_no_bid_yet": "{who}: es gibt noch kein Gebot zum Anzweifeln: eröffne mit einem Gebot",
        "err_calza_not_allowed": "{who}: Calza geht gerade nicht",
        "err_direction_required": "{who}: wähle zuerst, wer weiterspielt: !dir + oder -",
        "err_game_over": "{who}: dieses Spiel ist vorbei: !neu eröffnet einen neuen Tisch",
        "err_game_not_started": "{who}: das Spiel hat nicht begonnen: {host} startet es "
        "mit !starten",
        "err_game_started": "{who}: das Spiel läuft schon: warte auf den nächsten Tisch",
        "err_not_host": "{who}: nur {host} kann diesen Tisch starten",
        "err_table_full": "{who}: der Tisch ist voll",
        "err_too_few_players": "{who}: zum Starten braucht es zwei Spieler",
        "err_not_seated": "{who}: du hast keinen Platz an diesem Tisch (!mitspielen)",
        "err_paused": "{who}: der Tisch pausiert",
        "err_rate_limited": "{who}: zu schnell: warte kurz und versuch es noch einmal",
        "err_bad_rules": "{who}: so lässt sich kein Tisch eröffnen: !neu [Preset] [bots N] "
        "[würfel W] [uhr S]",
    },
}
