// Words of the browser client in English, Spanish and German.
// Spanish uses the traditional face names of seed 003: as, tonto, tren, cuadra, quina, cena.

export const LANGS = { en: "English", es: "Español", de: "Deutsch" };

const FACE_NAMES = {
  en: { one: ["one", "two", "three", "four", "five", "six"], many: ["ones", "twos", "threes", "fours", "fives", "sixes"] },
  es: { one: ["as", "tonto", "tren", "cuadra", "quina", "cena"], many: ["ases", "tontos", "trenes", "cuadras", "quinas", "cenas"] },
  de: { one: ["Paco", "Zweier", "Dreier", "Vierer", "Fünfer", "Sechser"], many: ["Pacos", "Zweier", "Dreier", "Vierer", "Fünfer", "Sechser"] },
};

const T = {
  en: {
    title: "Dudo", lobby: "Lobby", openTables: "Open tables", noTables: "No open table yet: create one.",
    yourName: "Your name", create: "Create a table", preset: "Rules", seats: "Seats", bots: "Bots",
    botLevel: "Bot level", easy: "easy", normal: "normal", hard: "hard", assisted: "Show my odds",
    clock: "Turn clock (seconds, 0 = none)", startDice: "Dice each", wildOnes: "Ones are wild",
    palifico: "Palifico rounds", calza: "Calza", calzaOff: "no", calzaTurn: "in turn", calzaAnyone: "anyone",
    openingOnes: "Open on ones", never: "never", singleDie: "with a single die", always: "always",
    direction: "Opener picks the direction", more: "More options", createBtn: "Create and sit",
    join: "Sit", watch: "Watch", full: "full", taken: "seated", back: "Lobby", share: "Invite link",
    waiting: "Waiting for players", start: "Start now", youAre: "You", yourTurn: "Your turn",
    turnOf: "{name}'s turn", bidOf: "{name} bids {q} × {face}", noBid: "No bid yet: open the round.",
    raise: "Raise", bidBtn: "Bid", dudo: "Dudo!", calzaBtn: "Calza!", chooseDirection: "Choose the direction",
    left: "← decreasing", right: "increasing →", palificoBanner: "Palifico round: the face is locked, ones are not wild",
    palificoWild: "Palifico round: the face is locked", reveal: "Reveal", count: "{count} counted for {q} × {face}",
    lost: "{name} loses a die", gained: "{name} wins a die back", noChange: "Nobody loses a die",
    eliminated: "{name} is out", winner: "{name} wins!", standings: "Final standings", chips: "chips",
    verified: "Dice verified against the round's commitment", notVerified: "The seed does not match the commitment!",
    dealt: "Dealt dice (no commitment)", ok: "OK", odds: "Odds", oddsBid: "standing bid true: {p}",
    oddsCalza: "exactly right: {p}", oddsRaise: "this bid true: {p}", reconnecting: "Connection lost, reconnecting…",
    spectator: "Watching", dice: "dice", die: "die", out: "out", bot: "bot", away: "away", errors: {},
    history: "Bids this round", round: "Round {n}", seconds: "{s}s", lastRound: "Last round", leave: "Leave",
    over: "Game over", newGame: "New table",
    tournaments: "Tournaments", noTournaments: "No tournament yet.", quickCup: "Quick tournament (you + bots)",
    register: "Register", standingsBtn: "Standings", begin: "Begin now", movedTo: "Moved to table {table}",
    entrants: "{n} entrants", playersLeft: "{n} left", place: "Place {n}", registering: "registering",
    running: "running", finished: "over", cupOver: "Tournament over", waitingSeat: "Waiting for a seat…", moreTables: "and {n} more tables",
    registered: "You are registered", heat: "Heat {n}",
    leaderboard: "Leaderboard", rating: "Rating", games: "Games", noRatings: "Nobody is rated yet: finish a game against people.",
  },
  es: {
    title: "Dudo", lobby: "Salón", openTables: "Mesas abiertas", noTables: "No hay mesas abiertas: creá una.",
    yourName: "Tu nombre", create: "Crear una mesa", preset: "Reglas", seats: "Sillas", bots: "Bots",
    botLevel: "Nivel de los bots", easy: "fácil", normal: "normal", hard: "difícil", assisted: "Mostrar mis probabilidades",
    clock: "Reloj por turno (segundos, 0 = sin reloj)", startDice: "Dados por jugador", wildOnes: "Los ases son comodines",
    palifico: "Rondas de palifico", calza: "Calza", calzaOff: "no", calzaTurn: "en su turno", calzaAnyone: "cualquiera",
    openingOnes: "Abrir con ases", never: "nunca", singleDie: "con un solo dado", always: "siempre",
    direction: "Quien abre elige la dirección", more: "Más opciones", createBtn: "Crear y sentarme",
    join: "Sentarme", watch: "Mirar", full: "llena", taken: "sentados", back: "Salón", share: "Enlace de invitación",
    waiting: "Esperando jugadores", start: "Empezar ya", youAre: "Vos", yourTurn: "Tu turno",
    turnOf: "Turno de {name}", bidOf: "{name} puja {q} {face}", noBid: "Sin puja: abrí la ronda.",
    raise: "Subir", bidBtn: "Pujar", dudo: "¡Dudo!", calzaBtn: "¡Calza!", chooseDirection: "Elegí la dirección",
    left: "← descendente", right: "ascendente →", palificoBanner: "Ronda de palifico: la pintura no cambia, los ases no son comodines",
    palificoWild: "Ronda de palifico: la pintura no cambia", reveal: "Se levantan los vasos", count: "Hay {count} para {q} {face}",
    lost: "{name} pierde un dado", gained: "{name} recupera un dado", noChange: "Nadie pierde un dado",
    eliminated: "{name} queda eliminado", winner: "¡Gana {name}!", standings: "Posiciones", chips: "fichas",
    verified: "Dados verificados con el compromiso de la ronda", notVerified: "¡La semilla no coincide con el compromiso!",
    dealt: "Dados repartidos (sin compromiso)", ok: "OK", odds: "Probabilidades", oddsBid: "la puja es cierta: {p}",
    oddsCalza: "es exacta: {p}", oddsRaise: "esta puja es cierta: {p}", reconnecting: "Se perdió la conexión, reconectando…",
    spectator: "Mirando", dice: "dados", die: "dado", out: "fuera", bot: "bot", away: "ausente", errors: {},
    history: "Pujas de la ronda", round: "Ronda {n}", seconds: "{s} s", lastRound: "Ronda anterior", leave: "Salir",
    over: "Fin de la partida", newGame: "Nueva mesa",
    tournaments: "Torneos", noTournaments: "Todavía no hay torneos.", quickCup: "Torneo rápido (vos + bots)",
    register: "Inscribirme", standingsBtn: "Posiciones", begin: "Empezar ya", movedTo: "Te pasaron a la mesa {table}",
    entrants: "{n} inscriptos", playersLeft: "quedan {n}", place: "Puesto {n}", registering: "inscripción",
    running: "en juego", finished: "terminado", cupOver: "Terminó el torneo", waitingSeat: "Esperando una silla…", moreTables: "y {n} mesas más",
    registered: "Estás inscripto", heat: "Serie {n}",
    leaderboard: "Clasificación", rating: "Puntaje", games: "Partidas", noRatings: "Todavía nadie tiene puntaje: terminá una partida contra personas.",
  },
  de: {
    title: "Dudo", lobby: "Lobby", openTables: "Offene Tische", noTables: "Noch kein offener Tisch: leg einen an.",
    yourName: "Dein Name", create: "Tisch anlegen", preset: "Regeln", seats: "Plätze", bots: "Bots",
    botLevel: "Stärke der Bots", easy: "leicht", normal: "normal", hard: "schwer", assisted: "Meine Chancen zeigen",
    clock: "Zugzeit (Sekunden, 0 = keine)", startDice: "Würfel je Spieler", wildOnes: "Einsen sind Joker",
    palifico: "Palifico-Runden", calza: "Calza", calzaOff: "nein", calzaTurn: "am Zug", calzaAnyone: "jeder",
    openingOnes: "Eröffnen auf Pacos", never: "nie", singleDie: "mit einem Würfel", always: "immer",
    direction: "Der Eröffner wählt die Richtung", more: "Weitere Optionen", createBtn: "Anlegen und Platz nehmen",
    join: "Platz nehmen", watch: "Zuschauen", full: "voll", taken: "besetzt", back: "Lobby", share: "Einladungslink",
    waiting: "Warte auf Spieler", start: "Jetzt starten", youAre: "Du", yourTurn: "Du bist dran",
    turnOf: "{name} ist dran", bidOf: "{name} bietet {q} × {face}", noBid: "Noch kein Gebot: eröffne die Runde.",
    raise: "Erhöhen", bidBtn: "Bieten", dudo: "Dudo!", calzaBtn: "Calza!", chooseDirection: "Wähle die Richtung",
    left: "← absteigend", right: "aufsteigend →", palificoBanner: "Palifico-Runde: der Augenwert bleibt, Pacos sind keine Joker",
    palificoWild: "Palifico-Runde: der Augenwert bleibt", reveal: "Aufdecken", count: "{count} gezählt für {q} × {face}",
    lost: "{name} verliert einen Würfel", gained: "{name} bekommt einen Würfel zurück", noChange: "Niemand verliert einen Würfel",
    eliminated: "{name} scheidet aus", winner: "{name} gewinnt!", standings: "Endstand", chips: "Chips",
    verified: "Würfel gegen die Festlegung der Runde geprüft", notVerified: "Der Seed passt nicht zur Festlegung!",
    dealt: "Gegebene Würfel (ohne Festlegung)", ok: "OK", odds: "Chancen", oddsBid: "Gebot stimmt: {p}",
    oddsCalza: "genau richtig: {p}", oddsRaise: "dieses Gebot stimmt: {p}", reconnecting: "Verbindung verloren, verbinde neu…",
    spectator: "Zuschauer", dice: "Würfel", die: "Würfel", out: "raus", bot: "Bot", away: "weg", errors: {},
    history: "Gebote dieser Runde", round: "Runde {n}", seconds: "{s} s", lastRound: "Letzte Runde", leave: "Verlassen",
    over: "Spielende", newGame: "Neuer Tisch",
    tournaments: "Turniere", noTournaments: "Noch kein Turnier.", quickCup: "Schnelles Turnier (du + Bots)",
    register: "Anmelden", standingsBtn: "Stand", begin: "Jetzt beginnen", movedTo: "An Tisch {table} gesetzt",
    entrants: "{n} Teilnehmer", playersLeft: "noch {n}", place: "Platz {n}", registering: "Anmeldung",
    running: "läuft", finished: "beendet", cupOver: "Turnier beendet", waitingSeat: "Warte auf einen Platz…", moreTables: "und {n} weitere Tische",
    registered: "Du bist angemeldet", heat: "Runde {n}",
    leaderboard: "Rangliste", rating: "Wertung", games: "Spiele", noRatings: "Noch niemand hat eine Wertung: spiele eine Partie gegen Menschen.",
  },
};

const ERRORS = {
  en: {
    not_your_turn: "It is not your turn.", bid_not_higher: "That bid does not raise the last one.",
    bid_out_of_range: "That bid is out of range.", opening_on_ones: "A round may not open on ones.",
    palifico_face_locked: "In palifico the face cannot change.", no_bid_yet: "There is no bid yet.",
    calza_not_allowed: "You may not call Calza now.", direction_required: "Choose the direction first.",
    game_over: "The game is over.", rate_limited: "Slow down.", unauthorized: "This seat is not yours.",
    table_full: "The table is full.", game_started: "The game has started.", unknown_table: "No such table.",
  },
  es: {
    not_your_turn: "No es tu turno.", bid_not_higher: "Esa puja no supera a la anterior.",
    bid_out_of_range: "Esa puja no es posible.", opening_on_ones: "La ronda no puede arrancar con ases.",
    palifico_face_locked: "En palifico no se cambia de pintura.", no_bid_yet: "Todavía no hay puja.",
    calza_not_allowed: "No podés calzar ahora.", direction_required: "Primero elegí la dirección.",
    game_over: "La partida terminó.", rate_limited: "Más despacio.", unauthorized: "Esa silla no es tuya.",
    table_full: "La mesa está llena.", game_started: "La partida ya empezó.", unknown_table: "Esa mesa no existe.",
  },
  de: {
    not_your_turn: "Du bist nicht dran.", bid_not_higher: "Das Gebot ist nicht höher.",
    bid_out_of_range: "Dieses Gebot ist nicht möglich.", opening_on_ones: "Eine Runde darf nicht auf Pacos eröffnen.",
    palifico_face_locked: "In Palifico bleibt der Augenwert.", no_bid_yet: "Es gibt noch kein Gebot.",
    calza_not_allowed: "Calza ist jetzt nicht erlaubt.", direction_required: "Wähle zuerst die Richtung.",
    game_over: "Das Spiel ist vorbei.", rate_limited: "Langsamer.", unauthorized: "Dieser Platz gehört dir nicht.",
    table_full: "Der Tisch ist voll.", game_started: "Das Spiel hat begonnen.", unknown_table: "Diesen Tisch gibt es nicht.",
  },
};

let current = "en";

export function setLang(lang) {
  current = T[lang] ? lang : "en";
  localStorage.setItem("dudo.lang", current);
  document.documentElement.lang = current;
}

export function detectLang() {
  const saved = localStorage.getItem("dudo.lang");
  if (saved && T[saved]) return saved;
  const nav = (navigator.language || "en").slice(0, 2);
  return T[nav] ? nav : "en";
}

export function lang() {
  return current;
}

/** A translated string, with {placeholders} filled in. */
export function t(key, params = {}) {
  const text = T[current][key] ?? T.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, k) => (params[k] ?? `{${k}}`));
}

/** The name of a face for a quantity (es: "cinco quinas", "un as"). */
export function faceName(face, quantity = 2) {
  const names = FACE_NAMES[current];
  return (quantity === 1 ? names.one : names.many)[face - 1];
}

export function errorText(code, fallback) {
  return ERRORS[current][code] ?? ERRORS.en[code] ?? fallback ?? code;
}
