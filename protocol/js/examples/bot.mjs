// A Dudo bot in one file: creates a table against a house bot (or joins TABLE, or plays the
// seat of TOKEN), to the end.  node examples/bot.mjs URL [TABLE|TOKEN]
import { DudoApi, DudoConnection } from "dudo-client";

const [base = "http://127.0.0.1:8000", table] = process.argv.slice(2);
const api = new DudoApi(base);
const seat = table?.includes(".") // a seat token (tables have no dots)
  ? { token: table, table: "(given)", seat: "(given)" }
  : table
  ? await api.joinTable(table, { name: "JS bot" })
  : await api.createTable({ rules: { preset: "classic" }, seats: 2, bots: ["normal"], name: "JS bot" });
console.log(`table ${seat.table}, seat ${seat.seat}`);

// Call Dudo on a bid above a third of the dice; otherwise raise on the face we hold most of.
function choose(game) {
  if (game.legal.direction) return { type: "direction", value: 1 };
  const standing = game.bids.at(-1);
  if (standing && game.legal.dudo && standing[1] > game.dice_in_play / 3 + 1) return { type: "dudo" };
  const held = (face) => game.dice.filter((d) => d === face || (d === 1 && game.rules.wild_ones)).length;
  const options = game.legal.bid.map((quantity, i) => ({ quantity, face: i + 1 })).filter((o) => o.quantity !== null);
  if (!options.length) return { type: game.legal.dudo ? "dudo" : "calza" };
  const best = options.sort((a, b) => held(b.face) - held(a.face) || a.quantity - b.quantity)[0];
  return { type: "bid", ...best };
}

const conn = new DudoConnection(base, seat.token);
await conn.open();
const last = await conn.play((game) => { // each turn of ours, to the game's end
  const action = choose(game);
  console.log(`played ${JSON.stringify(action)}`);
  return action;
}, { onRefused: (err) => console.log(`refused: ${err.code}`) }); // then it is asked again
const winner = last.game?.winner;
console.log(winner === last.seat ? "I won" : `seat ${winner} won`);
conn.close();
