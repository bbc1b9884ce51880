"""A Dudo bot in one file: creates a table against a house bot (or joins TABLE, or plays
the seat of TOKEN) to the end.  python -m dudo_client.examples.bot URL [TABLE|TOKEN]"""

import asyncio
import sys

from dudo_client import FACES, Action, Die, DudoApi, DudoConnection, DudoError, GameView
from dudo_client.messages import Rules


def choose(game: GameView) -> Action:
    """Dudo on a bid above a third of the dice; else raise on the face we hold most of."""
    legal = game["legal"]
    if legal["direction"]:
        return {"type": "direction", "value": 1}
    standing = game["bids"][-1] if game["bids"] else None
    if standing and legal["dudo"] and standing[1] > game["dice_in_play"] / 3 + 1:
        return {"type": "dudo"}
    wild = game["rules"]["wild_ones"]
    options = [(q, f) for f, q in zip(FACES, legal["bid"], strict=True) if q is not None]
    if not options:
        return {"type": "dudo" if legal["dudo"] else "calza"}

    def held(face: Die) -> int:
        return sum(d == face or (wild and d == 1) for d in game["dice"])

    quantity, face = min(options, key=lambda o: (-held(o[1]), o[0]))
    return {"type": "bid", "quantity": quantity, "face": face}


async def main(base: str, table: str | None = None) -> None:
    async with DudoApi(base) as api:
        if table and "." in table:  # a seat token (tables have no dots)
            token = table
        elif table:
            token = (await api.join_table(table, name="Py bot"))["token"]
        else:
            rules: Rules = {"preset": "classic"}
            seat = await api.create_table(rules=rules, seats=2, bots=["normal"], name="Py bot")
            token = seat["token"]
            print(f"table {seat['table']}, seat {seat['seat']}")
    async with DudoConnection(base, token) as conn:

        def move(game: GameView) -> Action:
            action = choose(game)
            print(f"played {action}")
            return action

        def refused(err: DudoError) -> None:
            print(f"refused: {err.code}")  # and the policy is asked again

        last = await conn.play(move, on_refused=refused)  # each turn, to the game's end
    game = last["game"]
    winner = game["winner"] if game else None
    print("I won" if winner == last["seat"] else f"seat {winner} won")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000", *sys.argv[2:3]))
