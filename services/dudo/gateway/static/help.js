// How to play, the options, and the odds guide (seed 001's "think in thirds"), in
// English, Spanish and German; with a small calculator of the chance that a bid holds.

import { lang, t } from "./i18n.js";
import { app } from "./session.js";
import { atLeast } from "./odds.js";
import { h, link, pct } from "./ui.js";

const HELP = {
  en: {
    title: "How to play",
    sections: [
      ["The game", [
        "Everyone shakes their dice under a cup and looks only at their own. Players take turns to bid on all the dice on the table: \"five fours\" means at least five dice show a four, counting everyone's.",
        "Each bid must beat the last: more dice of any face, or the same number of a higher face. Ones (pacos) are wild: they count for whatever face is bid.",
        "Bidding on ones counts double: to switch to ones, halve the quantity, rounding up (after seven fours, four ones will do). To switch back, double it and add one.",
      ]],
      ["Calling", [
        "Dudo! (\"I doubt it\"): all dice are shown. If there are fewer than the bid, the bidder loses a die; otherwise the one who called loses one.",
        "Calza! (\"exactly\"): you claim the bid is exactly right. Right, and you win a die back; wrong, and you lose one.",
        "The loser of a die opens the next round. Whoever loses their last die is out; the last player with dice wins.",
      ]],
      ["Palifico", [
        "A player down to a single die opens a palifico round: the face of the opening bid cannot change, only the quantity rises, and ones are not wild (unless the table says so).",
      ]],
    ],
    oddsTitle: "Odds: think in thirds",
    odds: [
      "With wild ones, each die you cannot see shows a given face (or a one) one time in three; ones themselves one time in six. Without wild ones: one in six for every face.",
      "So: count your own matching dice, add a third of the hidden dice, and you have the likely total. A bid far above it is a good Dudo; a bid right on it may be worth a Calza.",
    ],
    calc: "Chance that at least {k} of {n} hidden dice match", hidden: "Hidden dice", needed: "Needed from them", wild: "Non-one face, ones wild",
  },
  es: {
    title: "Cómo se juega",
    sections: [
      ["El juego", [
        "Cada uno agita sus dados bajo el cacho y mira solo los suyos. Por turno se puja sobre todos los dados de la mesa: «cinco cuadras» quiere decir que hay al menos cinco dados mostrando 4, contando los de todos.",
        "Cada puja supera a la anterior: más dados de cualquier pintura, o la misma cantidad de una pintura más alta. Los ases (o balas) son comodines: cuentan para la pintura pujada.",
        "Pujar ases vale el doble: para pasar a ases se divide la cantidad por dos, redondeando hacia arriba (después de siete cuadras alcanzan cuatro ases). Para volver, se duplica y se suma uno.",
      ]],
      ["Dudar y calzar", [
        "¡Dudo!: se levantan los cachos. Si hay menos dados que los pujados, pierde un dado quien pujó; si no, quien dudó.",
        "¡Calzo!: decís que la puja es justa. Si acertás, recuperás un dado; si no, perdés uno.",
        "Quien pierde un dado abre la ronda siguiente. Quien pierde el último queda fuera; gana el último que conserva dados.",
      ]],
      ["Palifico", [
        "Quien queda con un solo dado abre una ronda de palifico: la pintura de la primera puja no cambia, solo sube la cantidad, y los ases no son comodines (salvo que la mesa lo diga).",
      ]],
    ],
    oddsTitle: "Probabilidades: pensar en tercios",
    odds: [
      "Con ases comodines, cada dado que no ves muestra una pintura dada (o un as) una vez de cada tres; los ases, una vez de cada seis. Sin comodines: una de cada seis para toda pintura.",
      "Así que: contá tus dados que coinciden, sumá un tercio de los dados ocultos y tenés el total probable. Una puja muy por encima merece un dudo; una puja justo ahí puede valer un calzo.",
    ],
    calc: "Probabilidad de que al menos {k} de {n} dados ocultos coincidan", hidden: "Dados ocultos", needed: "Cuántos de ellos", wild: "Pintura que no es as, ases comodines",
  },
  de: {
    title: "Spielregeln",
    sections: [
      ["Das Spiel", [
        "Alle schütteln ihre Würfel unter dem Becher und sehen nur die eigenen. Reihum bietet man auf alle Würfel am Tisch: „fünf Vierer“ heißt, mindestens fünf Würfel zeigen eine 4, alle zusammengezählt.",
        "Jedes Gebot muss das letzte überbieten: mehr Würfel eines beliebigen Werts oder gleich viele eines höheren. Einsen (Pacos) sind Joker: sie zählen für den gebotenen Wert.",
        "Pacos zählen doppelt: wer zu Pacos wechselt, halbiert die Anzahl und rundet auf (nach sieben Vierern reichen vier Pacos). Zurück geht es mit dem Doppelten plus eins.",
      ]],
      ["Anzweifeln", [
        "Dudo! („ich zweifle“): alle Würfel werden aufgedeckt. Sind es weniger als geboten, verliert der Bietende einen Würfel, sonst der Zweifler.",
        "Calza! („genau“): du sagst, das Gebot stimmt genau. Stimmt es, bekommst du einen Würfel zurück, sonst verlierst du einen.",
        "Wer einen Würfel verliert, eröffnet die nächste Runde. Wer den letzten verliert, scheidet aus; wer als Letzter Würfel hat, gewinnt.",
      ]],
      ["Palifico", [
        "Wer nur noch einen Würfel hat, eröffnet eine Palifico-Runde: der Augenwert des Eröffnungsgebots bleibt, nur die Anzahl steigt, und Pacos sind keine Joker (außer der Tisch will es so).",
      ]],
    ],
    oddsTitle: "Chancen: in Dritteln denken",
    odds: [
      "Mit Jokern zeigt jeder Würfel, den du nicht siehst, einen bestimmten Wert (oder einen Paco) einmal in drei Fällen; Pacos selbst einmal in sechs. Ohne Joker: einmal in sechs für jeden Wert.",
      "Also: zähle deine passenden Würfel, addiere ein Drittel der verdeckten, und du hast die wahrscheinliche Summe. Ein Gebot weit darüber ist ein gutes Dudo; eines genau darauf vielleicht ein Calza.",
    ],
    calc: "Chance, dass mindestens {k} von {n} verdeckten Würfeln passen", hidden: "Verdeckte Würfel", needed: "Davon nötig", wild: "Kein Paco-Wert, Pacos sind Joker",
  },
};

export function renderHelp() {
  const text = HELP[lang()] ?? HELP.en;
  const n = h("input", { type: "number", min: 1, max: 40, value: 15, id: "calc-n", test: "calc-n" });
  const k = h("input", { type: "number", min: 0, max: 40, value: 5, id: "calc-k", test: "calc-k" });
  const wild = h("input", { type: "checkbox", checked: true, id: "calc-wild" });
  const out = h("output", { test: "calc-out", "aria-live": "polite" });
  const update = () => {
    const hidden = Math.max(0, Number(n.value) || 0);
    const need = Math.max(0, Number(k.value) || 0);
    out.textContent = `${text.calc.replace("{k}", need).replace("{n}", hidden)}: ${pct(atLeast(need, hidden, wild.checked ? 1 / 3 : 1 / 6))}`;
  };
  for (const el of [n, k, wild]) el.addEventListener("input", update);
  app.replaceChildren(h("article", { class: "card help-page", test: "help" },
    h("div", { class: "row" }, link("#/", `← ${t("back")}`), h("h1", {}, text.title)),
    text.sections.map(([title, paragraphs]) => [h("h2", {}, title), paragraphs.map((p) => h("p", {}, p))]),
    h("h2", { id: "odds" }, text.oddsTitle),
    text.odds.map((p) => h("p", {}, p)),
    h("div", { class: "grid calc" },
      h("label", {}, text.hidden, n), h("label", {}, text.needed, k),
      h("label", { class: "check" }, wild, text.wild)),
    h("p", {}, out)));
  update();
}
