// A complete Dudo client in plain JavaScript (Node 22+, or Node 20 with --experimental-websocket).
//   node dudo-client.mjs http://127.0.0.1:8000 [table-id]
// Without a table id it creates a table against one bot; then it plays until the game ends.
const base = process.argv[2] ?? "http://127.0.0.1:8000";
const tableId = process.argv[3];

async function post(path, body) {
  const response = await fetch(base + path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(`${data.code}: ${data.message}`);
  return data;
}

// 1. Take a seat: create a table (we become its host) or join one. Keep the token.
const seat = tableId
  ? await post(`/api/tables/${tableId}/join`, { name: "JS client" })
  : await post("/api/tables", { rules: { preset: "classic", start_dice: 3 }, seats: 2, bots: ["normal"], name: "JS client" });
console.log(`table ${seat.table}, seat ${seat.seat}`);

// 2. Connect and say hello with the token. Every view is a full snapshot.
const ws = new WebSocket(base.replace(/^http/, "ws") + "/ws");
const send = (message) => ws.send(JSON.stringify({ v: 1, ...message }));
ws.onopen = () => send({ type: "hello", token: seat.token });

let lastVersion = -1;
let lastRevealed = null;
let counter = 0;

// 3. Decide: the lowest raise on the standing face, unless the bid already
//    claims more than about a third of the dice in play; then call Dudo.
function decide(game) {
  const legal = game.legal;
  if (legal.direction) return { type: "direction", value: 1 };
  const standing = game.bids.at(-1);
  if (standing && legal.dudo && standing[1] > game.dice_in_play / 3 + 1) return { type: "dudo" };
  const face = standing && legal.bid[standing[2] - 1] !== null ? standing[2] : 1 + legal.bid.findIndex((q, i) => i > 0 && q !== null);
  if (face > 0 && legal.bid[face - 1] !== null) return { type: "bid", quantity: legal.bid[face - 1], face };
  return legal.dudo ? { type: "dudo" } : { type: "calza" };
}

ws.onmessage = (event) => {
  const msg = JSON.parse(event.data);
  if (msg.type === "error") return console.log(`refused: ${msg.code} (${msg.message})`);
  if (msg.type !== "view" || msg.version <= lastVersion) return; // at-least-once: drop old views
  lastVersion = msg.version;
  const game = msg.game;
  if (!game) return console.log("waiting for players…");
  const last = game.last_round;
  if (last && last.round !== lastRevealed) {
    lastRevealed = last.round;
    console.log(`round ${last.round}: ${last.call} on ${last.bid[1]}×${last.bid[2]}, ${last.count} counted, dice ${JSON.stringify(last.dice)}`);
  }
  if (msg.status === "over") {
    console.log(`game over: winner is seat ${game.winner}${game.winner === msg.seat ? " (me!)" : ""}`);
    ws.close();
    return;
  }
  if (game.turn === msg.seat) {
    const action = decide(game);
    console.log(`my dice ${JSON.stringify(game.dice)}; I play ${JSON.stringify(action)}`);
    send({ type: "act", id: `js${counter++}`, action });
  }
};
ws.onclose = () => process.exit(0);
