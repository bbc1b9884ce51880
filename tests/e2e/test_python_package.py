"""The PyPI package `dudo-client` as a client developer gets it: built from protocol/python
(sdist, then the wheel from it), installed into a clean virtualenv with nothing else of
ours, its example bot type-checked (mypy --strict against the installed package), played
through a gateway to the end of a game, and passed through `dudo conformance client`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..servers import free_port

PACKAGE = Path(__file__).resolve().parents[2] / "protocol" / "python"
CHECKS = 6  # the conformance kit's


def _run(*args: str | Path, timeout: float = 300, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=timeout, env=env, **kw
    )  # type: ignore[call-overload]
    assert done.returncode == 0, f"{args}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the wheel, the python of a clean virtualenv that has it installed)."""
    root = tmp_path_factory.mktemp("pypkg")
    source = root / "source"  # built from a copy: the build writes beside its sources
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    _run(sys.executable, "-m", "build", "--outdir", root / "dist", source)
    (wheel,) = (root / "dist").glob("dudo_client-*.whl")
    # What the release workflow checks before it publishes (RELEASING.md): PyPI's own
    # rules for the metadata and the README.
    _run(sys.executable, "-m", "twine", "check", "--strict", *sorted((root / "dist").iterdir()))
    _run(sys.executable, "-m", "venv", root / "venv")
    python = root / "venv" / "bin" / "python"
    _run(python, "-m", "pip", "install", "-q", wheel, timeout=600)
    yield wheel, python


def test_the_wheel_holds_the_client_alone_with_two_dependencies(
    installed: tuple[Path, Path],
) -> None:
    wheel, python = installed
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert all(n.startswith(("dudo_client/", "dudo_client-")) for n in names), names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    (sdist,) = wheel.parent.glob("dudo_client-*.tar.gz")
    with tarfile.open(sdist) as tf:  # the changelog its README names, and the license
        shipped = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    assert {"CHANGELOG.md", "LICENSE", "README.md"} <= shipped, shipped
    assert "dudo_client/py.typed" in names and "dudo_client/messages.py" in names
    requires = sorted(
        line.split()[1] for line in meta.splitlines() if line.startswith("Requires-Dist")
    )
    assert [r.split(">")[0] for r in requires] == ["aiohttp", "msgspec"], requires
    # Nothing else of ours in the clean virtualenv: not the server, not its dependencies.
    ours = ("dudo", "redis", "numpy", "fakeredis")
    probe = f"import importlib.util as u; print([m for m in {ours} if u.find_spec(m)])"
    assert _run(python, "-c", probe, cwd=wheel.parent).stdout.strip() == "[]"
    say = "import dudo_client as d; print(d.__version__, d.PROTOCOL_VERSION)"
    version = _run(python, "-c", say)
    major, protocol = version.stdout.split()
    assert major.split(".")[0] == protocol  # MAJOR is the protocol version it speaks


TYPED_CALLS = """\
from dudo_client import FACES, Action, DudoApi, DudoConnection, DudoError, GameView


async def main(api: DudoApi, conn: DudoConnection, game: GameView) -> None:
    seat = await api.create_table(rules={"preset": "classic"}, seats=2, name="Ana")
    print(seat["table"])
    await api.create_table(rules={"preset": "classic"}, seats="two")  # type: ignore[arg-type]
    await api.create_table(rules={"preset": "klassic"})  # type: ignore[typeddict-item]
    await api.create_table(rules={}, colour="red")  # type: ignore[call-arg]
    await api.join_table("t1", name="Ben", seat="first")  # type: ignore[arg-type]
    await api.join_or_create("Ana", preset="liars-dice", seats=3, bots=["hard"])
    await api.join_or_create("Ana", preset="klassic")  # type: ignore[arg-type]
    stats = await api.player("ana")
    print(stats["handle"], stats["name"])
    bid: Action = {"type": "bid", "quantity": 2, "face": FACES[4]}
    seven: Action = {"type": "bid", "quantity": 2, "face": 7}  # type: ignore[typeddict-item]
    two: Action = {"type": "direction", "value": 2}  # type: ignore[typeddict-item]
    print(bid, seven, two)
    await conn.react("clap")
    await conn.react("lol")  # type: ignore[arg-type]
    made = await api.create_tournament(name="Cup", host="Olga", seats=3, bots="easy")
    await api.create_tournament(name="Cup", format="swiss")  # type: ignore[arg-type]
    await api.register(made["tournament"], name="Bea", colour="red")  # type: ignore[call-arg]
    listed = await api.tournaments()
    print(listed["tournaments"][0]["status"] == "registering")
    standings = await api.standings(made["tournament"])
    print(standings["standings"]["left"] + 1, standings["version"] + 1)
    results = await api.results(made["tournament"])
    print(results["places"][0]["place"] + 1, results["tables"][0]["rounds"][0]["out"])
    board = await api.leaderboard()
    print(board["leaderboard"][0]["ordinal"] + 1.0)
    solving = (await api.bot_solves())["endgame_solves"]
    print(solving["done"] + 1)  # type: ignore[index]
    await api.organize(made["tournament"], "token", "dance")  # type: ignore[arg-type]
    print(game["rules"]["wild_ones"] and game["rules"]["calza"] == "turn")
    try:
        await conn.act(bid)
    except DudoError as err:
        if err.facts is not None:
            print(err.facts.get("dice_in_play"))
            print(err.facts["colour"])  # type: ignore[typeddict-item]
"""


def test_the_http_calls_are_typed_to_their_requests(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    """Issue 52, item 2: `create_table(**body: Any)` took `seats="two"`, an unknown preset
    and unknown keys under mypy --strict; a face of 7, a direction of 2, `react("lol")`,
    a tournament's unknown format were typed `int` and `str`; the tournament and
    leaderboard calls returned `dict[str, Any]`, a view's rules had every option
    optional. Each ignore must be needed (--warn-unused-ignores): the types refuse those
    calls; and what the answers hold type-checks as used."""
    _, python = installed
    program = tmp_path / "calls.py"
    program.write_text(TYPED_CALLS, encoding="utf-8")
    checked = _run(sys.executable, "-m", "mypy", "--strict", "--warn-unused-ignores",
                   "--python-executable", python, "--no-incremental", program,
                   cwd=tmp_path)  # fmt: skip
    assert "Success" in checked.stdout


def test_the_example_bot_type_checks_strictly_against_the_installed_package(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    _, python = installed
    bot = tmp_path / "my_bot.py"
    shutil.copy(PACKAGE / "dudo_client" / "examples" / "bot.py", bot)
    checked = _run(sys.executable, "-m", "mypy", "--strict", "--python-executable", python,
                   "--no-incremental", bot, cwd=tmp_path)  # fmt: skip
    assert "Success" in checked.stdout
    # The README's "Five minutes" too, as a developer would paste it.
    readme = (PACKAGE / "README.md").read_text(encoding="utf-8")
    five = readme.split("## Five minutes", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "five.py").write_text(five, encoding="utf-8")
    _run(sys.executable, "-m", "mypy", "--strict", "--python-executable", python,
         "--no-incremental", tmp_path / "five.py", cwd=tmp_path)  # fmt: skip
    # ... and a mistake a developer could make is caught by the types, not at the table.
    bot.write_text(bot.read_text().replace('{"type": "dudo"}', '{"type": "doubt"}', 1))
    wrong = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-executable", str(python),
         "--no-incremental", str(bot)], capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert wrong.returncode == 1 and "doubt" in wrong.stdout, wrong.stdout


def test_the_installed_example_bot_plays_a_game_to_the_end(
    installed: tuple[Path, Path], served: str, tmp_path: Path
) -> None:
    _, python = installed
    done = _run(python, "-m", "dudo_client.examples.bot", served, cwd=tmp_path, timeout=180)
    assert "played " in done.stdout and " won" in done.stdout, done.stdout[-2000:]


def test_the_installed_example_bot_passes_the_conformance_kit_on_chosen_ports(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    """Through the command line, on ports the developer chose (``--ports``): the address
    the bot is given is in the range."""
    _, python = installed
    low = free_port()  # the kernel's pick, then the ten after it (skipped if busy)
    told = tmp_path / "url"
    record = f'echo "$1" > {told}; exec "$0" -m dudo_client.examples.bot "$1" "$2"'
    done = subprocess.run(
        [sys.executable, "-m", "dudo", "conformance", "client", "--ports", f"{low}-{low + 10}",
         "--", "sh", "-c", record, str(python), "{url}", "{token}"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.count("ok  ") == CHECKS
    port = int(told.read_text().strip().rsplit(":", 1)[1].split("/")[0])
    assert low <= port <= low + 10, (port, low)


# Issue 52's proof, with the package as built and installed: a quick-play bot to the
# end with `play`, and a connection that ends (never hangs) when its gateway is gone for
# good or restarted without its tables.
SCENARIO = """\
import asyncio
import json
import sys

from dudo_client import FACES, Action, DudoApi, DudoConnection, DudoError, GameView


def policy(game: GameView) -> Action:
    legal = game["legal"]
    if legal["direction"]:
        return {"type": "direction", "value": 1}
    if legal["dudo"] and game["bids"][-1][1] > game["dice_in_play"] // 3:
        return {"type": "dudo"}
    face, quantity = next((f, q) for f, q in zip(FACES, legal["bid"], strict=True) if q)
    return {"type": "bid", "quantity": quantity, "face": face}


async def main(base: str, mode: str, retries: int) -> None:
    async with DudoApi(base) as api:
        seat = await api.join_or_create("Quick", preset="classic", seats=2, bots=["normal"])
    async with DudoConnection(base, seat["token"], retries=retries) as conn:
        if mode == "play":
            last = await conn.play(policy)
            game = last["game"]
            assert game is not None and game["phase"] == "over"
            print(json.dumps({"over": True, "won": game["winner"] == last["seat"]}))
            return
        print("open", flush=True)
        try:  # a reader and a request, both pending when the gateway goes
            await asyncio.gather(conn.next("view", lambda view: False), conn.ping())
        except DudoError as err:
            reason = await conn.wait_closed()
            print(json.dumps({"code": err.code, "reason": reason.code}), flush=True)


asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if sys.argv[3:] else 3))
"""


def test_the_installed_package_quick_plays_a_game_to_the_end_with_play(
    installed: tuple[Path, Path], served: str, tmp_path: Path
) -> None:
    _, python = installed
    (tmp_path / "scenario.py").write_text(SCENARIO, encoding="utf-8")
    done = _run(python, tmp_path / "scenario.py", served, "play", cwd=tmp_path, timeout=180)
    assert '"over": true' in done.stdout, done.stdout[-2000:]


@pytest.mark.parametrize("restarted", [False, True], ids=["gone-for-good", "restarted"])
def test_the_installed_package_ends_when_its_gateway_goes(
    installed: tuple[Path, Path], tmp_path: Path, restarted: bool
) -> None:
    """Killed for good: the pending reader and request reject `gave_up` once its 3
    retries have failed (about 4 s); restarted (`dudo serve`'s tables gone with it):
    `unknown_table` at the first hello. The process then ends: nothing hangs."""
    from .test_client_ends import ends_when_its_gateway_goes

    _, python = installed
    (tmp_path / "scenario.py").write_text(SCENARIO, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    code, said = ends_when_its_gateway_goes(
        [str(python), str(tmp_path / "scenario.py")], tmp_path, restarted, env=env, cwd=tmp_path
    )
    assert said == {"code": code, "reason": code}, said
