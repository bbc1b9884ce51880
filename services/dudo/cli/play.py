"""Programs for people: ``dudo serve`` (everything in one process, playable in a
browser), ``dudo play`` (the terminal), ``dudo bot`` (one bot through the client
library), and ``dudo identity`` (an app backend's identity for a user)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import wire
from .common import (
    REVEAL_HOLD_S,
    add_limits,
    add_ws_layer,
    endgame_argument,
    limits_of,
    rule_options,
)
from .environment import Environment


def add(sub: Any, env: Environment) -> None:
    """These commands' parsers, under ``dudo``'s subcommands ``sub``."""
    serve = sub.add_parser("serve", help="everything in one process, playable in a browser")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--redis", help="use this Redis instead of an embedded one")
    serve.add_argument("--log-level", default="warning")
    serve.add_argument("--bot-think", default="0.6,1.4", help="MIN,MAX seconds a bot waits")
    serve.add_argument(
        "--reveal-hold",
        type=float,
        default=REVEAL_HOLD_S,
        help="seconds a round's reveal holds the next turn's clock and the bots (0: none)",
    )
    serve.add_argument(
        "--embedded",
        choices=["auto", "redis-server", "fakeredis"],
        default="auto",
        help="the embedded Redis: a redis-server if one is found (auto), or this one",
    )
    endgame_argument(serve)
    add_limits(serve)
    add_ws_layer(serve)
    serve.set_defaults(func=_serve)

    ident = sub.add_parser(
        "identity",
        help="sign an identity (a JWT) for a user of an app, with the app's private key "
        "(as its backend does; dudo admin app add --generate makes one)",
    )
    ident.add_argument("--app", required=True)
    ident.add_argument("--key", required=True, help="the app's private key (PEM file)")
    ident.add_argument("--kid", default="1", help="the key's id in the app's key set")
    ident.add_argument("--user", required=True, help="the app's own user id")
    ident.add_argument("--ttl", type=int, default=300, help="seconds it stays valid")
    ident.set_defaults(func=_identity)

    play = sub.add_parser("play", help="play in the terminal through a gateway")
    play.add_argument("url", nargs="?", default="http://127.0.0.1:8000")
    play.add_argument("--name", help="your name (asked if missing)")
    play.add_argument("--create", action="store_true", help="create a table instead of joining")
    play.add_argument("--join", metavar="TABLE", help="join this table")
    play.add_argument("--bots", type=int, default=2, help="with --create: bot seats")
    play.add_argument(
        "--level", choices=wire.BOT_LEVELS, default=wire.DEFAULT_BOT_LEVEL, help="the bots' level"
    )
    play.add_argument("--odds", action="store_true", help="with --create: show your odds")
    play.add_argument("--clock", type=int, help="with --create: seconds per turn")
    play.add_argument(
        "--rule", action="append", metavar="KEY=VALUE", help="with --create: any rule option"
    )
    play.add_argument("--seats", type=int, default=3, help="with --create: seats in all")
    play.add_argument("--preset", default="classic", help="with --create: rules preset")
    play.add_argument("--start-dice", type=int, help="with --create: dice each")
    play.add_argument(
        "--lang", choices=("en", "es", "de"), default="en", help="the text's language"
    )
    play.set_defaults(func=_play)

    bot = sub.add_parser(
        "bot", help="one bot playing through a gateway, as a client (the Python library)"
    )
    bot.add_argument("url", nargs="?", default="http://127.0.0.1:8000")
    bot.add_argument("--level", choices=wire.BOT_LEVELS, default=wire.DEFAULT_BOT_LEVEL)
    seat = bot.add_mutually_exclusive_group()
    seat.add_argument("--join", metavar="TABLE", help="join this table")
    seat.add_argument("--token", help="play the seat (or tournament entry) of this token")
    seat.add_argument("--tournament", metavar="ID", help="register for it and play it out")
    bot.add_argument("--name", help="the name it plays under")
    bot.add_argument("--seed", type=int, help="its random choices, for a game you can replay")
    bot.add_argument("--think", default="0", help="MIN[,MAX] seconds before each move")
    bot.add_argument("--seats", type=int, default=2, help="a new table's seats (default)")
    bot.add_argument(
        "--house", choices=wire.BOT_LEVELS, default=wire.DEFAULT_BOT_LEVEL,
        help="a new table's house bots' level",
    )
    bot.add_argument("--preset", default="classic", help="a new table's rules preset")
    bot.set_defaults(func=_bot)



def _serve(args: argparse.Namespace) -> int:
    from ..infra import configure
    from ..run import serve

    configure(args.log_level, json=False)
    low, _, high = args.bot_think.partition(",")
    serve.serve(
        port=args.port,
        redis_url=args.redis,
        host=args.host,
        bot_think=(float(low), float(high or low)),
        reveal_hold=args.reveal_hold,
        embedded_kind=args.embedded,
        warm_endgames=not args.no_endgame_solves,
        gateway_options={
            **limits_of(args), "secret": args.env.gateway_secret, "ws_layer": args.ws_layer,
            "event_loop": args.event_loop,
        },
    )
    return 0


def _play(args: argparse.Namespace) -> int:
    from ..run import play

    options = {
        "name": args.name,
        "create": args.create,
        "join": args.join,
        "bots": args.bots,
        "level": args.level,
        "seats": args.seats,
        "preset": args.preset,
        "start_dice": args.start_dice,
        "odds": args.odds,
        "clock": args.clock,
        "rules": rule_options(args.rule),
        "lang": args.lang,
    }
    return play.main(args.url, options)


def _bot(args: argparse.Namespace) -> int:
    import asyncio

    from dudo_client import DudoError

    from ..run import remote_bot

    low, _, high = args.think.partition(",")
    create = {
        "rules": {"preset": args.preset},
        "seats": args.seats,
        "bots": [args.house] * (args.seats - 1),
    }
    try:
        outcome = asyncio.run(
            remote_bot.run(
                args.url, level=args.level, seed=args.seed, name=args.name,
                think=(float(low), float(high or low)), table=args.join, token=args.token,
                tournament=args.tournament, create=create,
            )
        )  # fmt: skip
    except DudoError as exc:
        print(f"dudo bot: {exc.code}: {exc}", file=sys.stderr)
        return 1
    print(outcome.text())
    return 0


def _identity(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..auth import sign_identity

    try:
        private = Path(args.key).read_text()
        print(sign_identity(args.app, private, args.user, args.ttl, kid=args.kid))
    except (OSError, ValueError) as exc:
        print(f"dudo identity: {exc}", file=sys.stderr)
        return 2
    return 0

