// The rules presets and options the create form offers (docs/rules.md). PRESETS mirrors
// the engine's presets exactly (tests/e2e/test_page_words.py checks it against
// dudo.engine.rules), so the form can show each option's preset value and the seats a
// preset allows without asking the server.

// The bot levels the server plays (the protocol's BOT_LEVELS: tests/e2e/test_page_words.py
// holds this list to it, and each level to a word in every language).
export const BOT_LEVELS = ["easy", "normal", "hard"];

export const PRESETS = {
  classic: { preset: "classic", start_dice: 5, max_dice: 5, min_players: 2, max_players: 6, wild_ones: true, opening_ones: "never", calza: "turn", calza_needs_lost_die: false, palifico: true, palifico_wild_ones: false, loser_chooses_direction: false, turn_seconds: 0, assisted: false, bots_fill: false, stake: 0 },
  lizumo: { preset: "lizumo", start_dice: 3, max_dice: 3, min_players: 2, max_players: 6, wild_ones: true, opening_ones: "never", calza: "off", calza_needs_lost_die: false, palifico: false, palifico_wild_ones: false, loser_chooses_direction: false, turn_seconds: 0, assisted: false, bots_fill: false, stake: 0 },
  cacho: { preset: "cacho", start_dice: 5, max_dice: 5, min_players: 3, max_players: 6, wild_ones: true, opening_ones: "single_die", calza: "turn", calza_needs_lost_die: false, palifico: false, palifico_wild_ones: false, loser_chooses_direction: false, turn_seconds: 0, assisted: false, bots_fill: true, stake: 100 },
  "liars-dice": { preset: "liars-dice", start_dice: 5, max_dice: 5, min_players: 2, max_players: 6, wild_ones: false, opening_ones: "always", calza: "off", calza_needs_lost_die: false, palifico: false, palifico_wild_ones: false, loser_chooses_direction: false, turn_seconds: 0, assisted: false, bots_fill: false, stake: 0 },
};

// The options of the "More options" part of the form, each shown with its preset value
// and a one-line explanation (i18n keys opt_<name> and help_<name>). `choices` are the
// values offered; booleans offer yes / no.
export const OPTIONS = [
  { name: "start_dice", choices: [1, 2, 3, 4, 5] },
  { name: "wild_ones", choices: [true, false] },
  { name: "opening_ones", choices: ["never", "single_die", "always"] },
  { name: "calza", choices: ["off", "turn", "anyone"] },
  { name: "calza_needs_lost_die", choices: [true, false] },
  { name: "palifico", choices: [true, false] },
  { name: "palifico_wild_ones", choices: [true, false] },
  { name: "loser_chooses_direction", choices: [true, false] },
  { name: "stake", choices: [0, 10, 50, 100, 500] },
];
