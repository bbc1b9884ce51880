// The example bot in TypeScript, with the package's types (tsc --strict checks it):
// creates a table against a house bot and plays it to the end.
import { DudoApi, DudoConnection, DudoError } from "dudo-client";
import type { Action, GameView, ViewMessage } from "dudo-client";

const base = process.argv[2] ?? "http://127.0.0.1:8000";
const api = new DudoApi(base);
const seat = await api.createTable({ rules: { preset: "classic" }, seats: 2, bots: ["normal"], name: "TS bot" });
if (!seat.token) throw new Error("a table made with a name seats its maker"); // (the schema's `token?`)

/** Dudo on a bid above a third of the dice; else raise on the face we hold most of. */
function choose(game: GameView): Action {
  const legal = game.legal!; // a seat with dice in its turn has its legal moves
  if (legal.direction) return { type: "direction", value: 1 };
  const standing = game.bids.at(-1);
  if (standing && legal.dudo && standing[1] > game.dice_in_play / 3 + 1) return { type: "dudo" };
  const wild = game.rules.wild_ones ?? true;
  const held = (face: number) => (game.dice ?? []).filter((d) => d === face || (wild && d === 1)).length;
  const options = legal.bid.flatMap((quantity, i) => (quantity === null ? [] : [{ quantity, face: i + 1 }]));
  if (!options.length) return { type: legal.dudo ? "dudo" : "calza" };
  options.sort((a, b) => held(b.face) - held(a.face) || a.quantity - b.quantity);
  return { type: "bid", quantity: options[0].quantity, face: options[0].face };
}

const conn = new DudoConnection(base, seat.token, { retries: 10, openTimeoutMs: 15000 });
let busy = false;
async function play(view: ViewMessage): Promise<void> {
  const game = view.game;
  if (game && game.winner !== null) {
    console.log(game.winner === view.seat ? "I won" : `seat ${game.winner} won`);
    return conn.close();
  }
  if (busy || !game?.legal || game.turn !== view.seat) return;
  busy = true;
  const action = choose(game);
  try {
    const shown = await conn.act(action); // the view that shows it
    console.log(`played ${JSON.stringify(action)} (version ${shown.version})`);
  } catch (err) {
    console.log(`refused: ${err instanceof DudoError ? err.code : err}`);
  }
  busy = false;
  if (conn.view) void play(conn.view); // the view that came meanwhile may be our turn again
}
conn.addEventListener("view", ({ detail }) => void play(detail));
conn.addEventListener("gave_up", ({ detail }) => console.log(`gave up: ${detail}`));
await conn.open();
