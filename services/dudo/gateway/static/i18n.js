// The page in English, Spanish and German: words (words.js), face names, and every
// error code the server may send (docs/protocol.md, "Errors").
// Spanish uses the traditional face names of seed 003: as, tonto, tren, cuadra, quina, cena.

import { WORDS } from "./words.js";

export const LANGS = { en: "English", es: "Español", de: "Deutsch" };

const FACE_NAMES = {
  en: { one: ["one", "two", "three", "four", "five", "six"], many: ["ones", "twos", "threes", "fours", "fives", "sixes"] },
  es: { one: ["as", "tonto", "tren", "cuadra", "quina", "cena"], many: ["ases", "tontos", "trenes", "cuadras", "quinas", "cenas"] },
  de: { one: ["Paco", "Zweier", "Dreier", "Vierer", "Fünfer", "Sechser"], many: ["Pacos", "Zweier", "Dreier", "Vierer", "Fünfer", "Sechser"] },
};

export const ERRORS = {
  en: {
    not_your_turn: "It is not your turn.", bid_not_higher: "That bid does not raise the last one.",
    bid_out_of_range: "That bid is out of range.", opening_on_ones: "A round may not open on ones.",
    palifico_face_locked: "In palifico the face cannot change.", no_bid_yet: "There is no bid yet.",
    calza_not_allowed: "You may not call Calza now.", direction_required: "Choose the direction first.",
    game_over: "The game is over.", bad_action: "That move is not possible now.",
    not_between_rounds: "That can only happen between rounds.", bad_message: "The page sent something the server could not read.",
    too_large: "That message is too large.", unsupported_version: "This page is out of date: reload it.",
    bad_rules: "These options do not go together.", unknown_table: "No such table.", table_exists: "That table exists already.",
    unknown_tournament: "No such tournament.", unknown_player: "No statistics for that player.", tournament_full: "The tournament is full.", name_taken: "Someone in this tournament already has that name.",
    table_full: "The table is full.", seat_taken: "That seat is taken.", game_started: "The game has started.",
    not_seated: "You have no seat at this table.", not_attached: "Your seat is open in another window.",
    not_host: "Only the host may do that.", too_few_players: "Not enough players to start.",
    paused: "The organizer paused the tournament: wait for it to resume.", tournament_over: "The tournament is over.", game_not_started: "The game has not started yet.", game_not_over: "The game is not over yet.", bad_seed: "That is not the seed you committed to.", duplicate: "That was done already.",
    rate_limited: "Slow down a little.", unauthorized: "This seat is not yours.",
    unavailable: "The game service is away for a moment; trying again.", timeout: "The game service is slow; trying again.",
    internal: "Something went wrong on our side; try again.",
  },
  es: {
    not_your_turn: "No es tu turno.", bid_not_higher: "Esa puja no supera a la anterior.",
    bid_out_of_range: "Esa puja no es posible.", opening_on_ones: "La ronda no puede arrancar con ases.",
    palifico_face_locked: "En palifico no se cambia de pintura.", no_bid_yet: "Todavía no hay puja.",
    calza_not_allowed: "No podés calzar ahora.", direction_required: "Primero elegí la dirección.",
    game_over: "La partida terminó.", bad_action: "Esa jugada no es posible ahora.",
    not_between_rounds: "Eso solo se puede entre rondas.", bad_message: "La página mandó algo que el servidor no entiende.",
    too_large: "Ese mensaje es demasiado grande.", unsupported_version: "Esta página está desactualizada: recargala.",
    bad_rules: "Esas opciones no van juntas.", unknown_table: "Esa mesa no existe.", table_exists: "Esa mesa ya existe.",
    unknown_tournament: "Ese torneo no existe.", unknown_player: "No hay estadísticas de ese jugador.", tournament_full: "El torneo está lleno.", name_taken: "Ya hay alguien con ese nombre en el torneo.",
    table_full: "La mesa está llena.", seat_taken: "Esa silla está ocupada.", game_started: "La partida ya empezó.",
    not_seated: "No tenés silla en esta mesa.", not_attached: "Tu silla está abierta en otra ventana.",
    not_host: "Solo quien creó la mesa puede hacer eso.", too_few_players: "Faltan jugadores para empezar.",
    paused: "El organizador pausó el torneo: esperá a que lo reanude.", tournament_over: "El torneo terminó.", game_not_started: "La partida todavía no empezó.", game_not_over: "La partida todavía no terminó.", bad_seed: "Esa no es la semilla que comprometiste.", duplicate: "Eso ya se hizo.",
    rate_limited: "Más despacio.", unauthorized: "Esa silla no es tuya.",
    unavailable: "El juego no responde por un momento; reintentando.", timeout: "El juego tarda; reintentando.",
    internal: "Algo falló de nuestro lado; probá de nuevo.",
  },
  de: {
    not_your_turn: "Du bist nicht dran.", bid_not_higher: "Das Gebot ist nicht höher.",
    bid_out_of_range: "Dieses Gebot ist nicht möglich.", opening_on_ones: "Eine Runde darf nicht auf Pacos eröffnen.",
    palifico_face_locked: "In Palifico bleibt der Augenwert.", no_bid_yet: "Es gibt noch kein Gebot.",
    calza_not_allowed: "Calza ist jetzt nicht erlaubt.", direction_required: "Wähle zuerst die Richtung.",
    game_over: "Das Spiel ist vorbei.", bad_action: "Dieser Zug geht gerade nicht.",
    not_between_rounds: "Das geht nur zwischen den Runden.", bad_message: "Die Seite hat etwas Unlesbares gesendet.",
    too_large: "Diese Nachricht ist zu groß.", unsupported_version: "Diese Seite ist veraltet: lade sie neu.",
    bad_rules: "Diese Optionen passen nicht zusammen.", unknown_table: "Diesen Tisch gibt es nicht.", table_exists: "Diesen Tisch gibt es schon.",
    unknown_tournament: "Dieses Turnier gibt es nicht.", unknown_player: "Für diesen Spieler gibt es keine Statistik.", tournament_full: "Das Turnier ist voll.", name_taken: "Diesen Namen hat schon jemand im Turnier.",
    table_full: "Der Tisch ist voll.", seat_taken: "Dieser Platz ist besetzt.", game_started: "Das Spiel hat begonnen.",
    not_seated: "Du hast an diesem Tisch keinen Platz.", not_attached: "Dein Platz ist in einem anderen Fenster offen.",
    not_host: "Das darf nur der Gastgeber.", too_few_players: "Zu wenige Spieler zum Starten.",
    paused: "Der Veranstalter hat pausiert: warte, bis es weitergeht.", tournament_over: "Das Turnier ist vorbei.", game_not_started: "Das Spiel hat noch nicht begonnen.", game_not_over: "Das Spiel ist noch nicht vorbei.", bad_seed: "Das ist nicht der Seed, auf den du dich festgelegt hast.", duplicate: "Das ist schon geschehen.",
    rate_limited: "Etwas langsamer.", unauthorized: "Dieser Platz gehört dir nicht.",
    unavailable: "Der Spieldienst ist kurz weg; neuer Versuch läuft.", timeout: "Der Spieldienst ist langsam; neuer Versuch läuft.",
    internal: "Bei uns ist etwas schiefgegangen; versuche es noch einmal.",
  },
};

let current = "en";

// Keys asked for in a language that lacks them (the English text shows instead): the
// browser tests read this after playing in each language and expect it empty.
export const missing = new Set();
globalThis.dudoMissingWords = missing;

export function setLang(code) {
  current = WORDS[code] ? code : "en";
  localStorage.setItem("dudo.lang", current);
  document.documentElement.lang = current;
}

export function detectLang() {
  const saved = localStorage.getItem("dudo.lang");
  if (saved && WORDS[saved]) return saved;
  const nav = (navigator.language || "en").slice(0, 2);
  return WORDS[nav] ? nav : "en";
}

export function lang() {
  return current;
}

/** A translated string, with {placeholders} filled in. */
/** A rules preset's name in the page's language. */
export function presetName(preset) {
  return t(`preset_${preset}`);
}

export function t(key, params = {}) {
  let text = WORDS[current][key];
  if (text === undefined) {
    missing.add(`${current}:${key}`);
    text = WORDS.en[key] ?? key;
  }
  // A word with plural forms ({one, other}: "1 entrant", "6 entrants"), chosen by `n`.
  if (typeof text === "object") text = text[new Intl.PluralRules(current).select(Number(params.n ?? 0))] ?? text.other;
  return text.replace(/\{(\w+)\}/g, (_, k) => params[k] ?? `{${k}}`);
}

/** The name of a face for a quantity (es: "cinco quinas", "un as"). */
export function faceName(face, quantity = 2) {
  const names = FACE_NAMES[current];
  return (quantity === 1 ? names.one : names.many)[face - 1];
}

/** A refusal in the page's language (the server's English only for a code it lacks). */
export function errorText(code, fallback) {
  const text = ERRORS[current][code];
  if (text !== undefined) return text;
  missing.add(`${current}:error:${code}`);
  return ERRORS.en[code] ?? fallback ?? code;
}

/** "3 minutes ago", in the page's language. */
export function ago(ms) {
  const seconds = Math.round((ms - Date.now()) / 1000);
  const format = new Intl.RelativeTimeFormat(current, { numeric: "auto" });
  for (const [unit, size] of [["day", 86400], ["hour", 3600], ["minute", 60]]) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return format.format(seconds, "second");
}
