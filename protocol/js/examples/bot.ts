// The example bot in TypeScript, with the package's types (tsc --strict checks it):
// creates a table against a house bot and plays it to the end.
import { DudoApi, DudoConnection, DudoError, FACES } from "dudo-client";
import type { Action, Die, GameView, ViewMessage } from "dudo-client";

const base = process.argv[2] ?? "http://127.0.0.1:8000";
const api = new DudoApi(base);
const seat = await api.createTable({ rules: { preset: "classic" }, seats: 2, bots: ["normal"], name: "TS bot" });

/** Dudo on a bid above a third of the dice; else raise on the face we hold most of. */
function choose(game: GameView): Action {
  const legal = game.legal!; // a seat with dice in its turn has its legal moves
  if (legal.direction) return { type: "direction", value: 1 };
  const standing = game.bids.at(-1);
  if (standing && legal.dudo && standing[1] > game.dice_in_play / 3 + 1) return { type: "dudo" };
  const wild = game.rules.wild_ones;
  const held = (face: Die) => (game.dice ?? []).filter((d) => d === face || (wild && d === 1)).length;
  const options = legal.bid.flatMap((quantity, i) => (quantity === null ? [] : [{ quantity, face: FACES[i] }]));
  if (!options.length) return { type: legal.dudo ? "dudo" : "calza" };
  options.sort((a, b) => held(b.face) - held(a.face) || a.quantity - b.quantity);
  return { type: "bid", quantity: options[0].quantity, face: options[0].face };
}

const conn = new DudoConnection(base, seat.token, { retries: 10, openTimeoutMs: 15000 });
conn.addEventListener("gave_up", ({ detail }) => console.log(`gave up: ${detail}`));
await conn.open();
const last: ViewMessage = await conn.play((game) => { // each turn of ours, to the game's end
  const action = choose(game);
  console.log(`played ${JSON.stringify(action)}`);
  return action;
}, { onRefused: (err: DudoError) => console.log(`refused: ${err.code}`) }); // asked again
const winner = last.game?.winner;
console.log(winner === last.seat ? "I won" : `seat ${winner} won`);
conn.close();
