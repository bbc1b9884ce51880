// A third-party gateway in Node, on the stream protocol alone (docs/protocol.md, Part 4:
// "Write your own gateway"): it takes one seat at a new table against a house bot and
// plays it to the end with the peers' policy, printing one JSON line with the result.
// Its "clients" are itself; a real gateway relays the same messages to its users.
//
//   npm install ioredis@5 @msgpack/msgpack@3
//   DUDO_REDIS_URL=redis://gateway-node-1:PASS@127.0.0.1:6379/0 DUDO_GATEWAY_ID=node-1 node gateway.mjs
//
// (the URL from `dudo admin gateway add node-1`, or the two lines `dudo sandbox` prints:
// a Redis user that may do this and no more)
import { createHmac, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";
import { decode, encode } from "@msgpack/msgpack";
import Redis from "ioredis";

const GATEWAY = process.env.DUDO_GATEWAY_ID;
const OUTBOX = `dudo:{g:${GATEWAY}}:out`;
// No INFO ready check: a gateway's Redis user may not run INFO.
const options = { enableReadyCheck: false, maxRetriesPerRequest: null };
const redis = new Redis(process.env.DUDO_REDIS_URL, options);
const reader = new Redis(process.env.DUDO_REDIS_URL, options); // its blocking XREAD, alone

// 1. Setting up: the workers' partition count (wait until one has stored it).
let partitions = null;
while (!(partitions = Number(await redis.hget("dudo:config", "partitions")))) {
  await new Promise((done) => setTimeout(done, 200));
}
// Our presence (the one registry key our Redis user may write): live while it lasts.
const register = () => redis.set(`dudo:{g:${GATEWAY}}:alive`, "view", "PX", 30000);
await register();
const heartbeat = setInterval(register, 2000);

// 2. Sending: one msgpack map per entry, to our own inbox on the table's partition (the
// one stream there our Redis user may append to), signed (field s) with a key derived
// from our Redis password: workers check who wrote it.
const password = decodeURIComponent(new URL(process.env.DUDO_REDIS_URL).password);
const key = createHmac("sha256", password).update("dudo inbox entries/1").digest();
const signed = (payload) => createHmac("sha256", key).update(payload).digest().subarray(0, 16);
const inbox = (table) =>
  `dudo:{p${crc32(Buffer.from(table, "utf8")) % partitions}}:in:${GATEWAY}`;
const id = (prefix) => `${prefix}${randomBytes(6).toString("hex")}`;
const table = id("n");
// Our player's handle, as the worker names it in `joined` (we never know, nor choose, the
// player's id: the deployment makes it). `request`: a key of ours, so that the join sent
// again after a failure is the same join.
let player = null;
const request = id("r");
let sent = 0;
async function send(type, fields = {}) {
  const msg = { v: 1, type, id: id(type[0]), table, gateway: GATEWAY, ...fields };
  const payload = Buffer.from(encode(msg));
  await redis.xadd(inbox(table), "*", "m", payload, "s", signed(payload));
  sent += 1;
}
// Read from the outbox's end as it is now: anything older is for a previous life.
let last = "0-0";
if (await redis.exists(OUTBOX)) {
  const info = await redis.xinfo("STREAM", OUTBOX);
  last = info[info.indexOf("last-generated-id") + 1];
}

await send("create", {
  rules: { preset: "classic", start_dice: 3 },
  seats: [{ kind: "open" }, { kind: "bot", level: "normal" }],
  request, // the host: whom our join's request key names
});
await send("join", { request, name: "Node" }); // every seat taken: the game starts

// The peers' policy: Dudo if the bid is above what the others' dice likely hold
// (a third of them, a sixth for ones) plus our own matching dice; else the least raise.
function choose(game, mine) {
  const { legal, dice } = mine;
  if (legal.direction) return { type: "direction", value: 1 };
  const wild = game.rules.wild_ones && !game.palifico;
  const matching = (face) => dice.filter((d) => d === face || (wild && face !== 1 && d === 1)).length;
  const others = game.dice_in_play - dice.length;
  const standing = game.bids.at(-1); // [seat, quantity, face]
  if (standing && legal.dudo) {
    const [, quantity, face] = standing;
    const expected = others / (face === 1 || !wild ? 6 : 3) + matching(face);
    if (quantity > expected) return { type: "dudo" };
  }
  let best = null;
  legal.bid.forEach((least, i) => {
    const face = i + 1;
    if (least !== null && (!best || matching(face) > matching(best.face))) {
      best = { type: "bid", quantity: least, face };
    }
  });
  return best ?? { type: "dudo" };
}

// 3. Receiving: each outbox entry holds a msgpack array of messages; trim behind you.
let version = -1;
let refused = 0;
for (;;) {
  const got = await reader.xreadBuffer("BLOCK", 1000, "STREAMS", OUTBOX, last);
  for (const [, entries] of got ?? []) {
    for (const [entryId, fields] of entries) {
      last = entryId.toString();
      for (const msg of decode(fields[1])) {
        if (msg.table !== table) continue;
        if (msg.type === "error") {
          refused += 1;
          console.error(`refused: ${msg.code}: ${msg.message}`);
          continue;
        }
        // The seat is ours: `player` is its holder's handle, `token` the seat token a
        // real gateway hands its client (hello through any gateway with it, later).
        if (msg.type === "joined") player = msg.player;
        if (msg.type !== "view" || msg.version <= version) continue; // at least once
        version = msg.version;
        const game = msg.game;
        // Our seat's private part: by the player holding it, never by seat number.
        const mine = msg.seats[msg.holders.indexOf(player)];
        if (game && game.winner !== null) {
          console.log(JSON.stringify({ table, winner: game.winner, seat: mine?.seat ?? null,
            sent, refused }));
          clearInterval(heartbeat);
          await redis.xtrim(OUTBOX, "MINID", last);
          redis.disconnect();
          reader.disconnect();
          process.exit(0);
        }
        const legal = mine?.legal;
        const any = legal && (legal.dudo || legal.direction || legal.bid.some((q) => q !== null));
        if (game && any && game.turn === mine.seat) {
          await send("act", { player, seat: mine.seat, action: choose(game, mine) });
        }
      }
    }
    await redis.xtrim(OUTBOX, "MINID", last);
  }
}
