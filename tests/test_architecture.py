"""The layering the design promises: the engine imports no I/O, clock or global RNG;
every ``dudo.*`` import runs down the layers (LAYERS); no import circles; no module
imports another's private name."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ENGINE = Path(__file__).resolve().parents[1] / "services" / "dudo" / "engine"
FORBIDDEN = {
    "redis",
    "asyncio",
    "socket",
    "http",
    "urllib",
    "time",
    "datetime",
    "random",
    "os",
    "threading",
    "subprocess",
    "structlog",
    "secrets",
}
ALLOWED_PROJECT = "dudo.engine"


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_engine_imports_no_io_clock_or_rng() -> None:
    files = sorted(ENGINE.glob("*.py"))
    assert files
    for path in files:
        for name in imports(path):
            root = name.split(".")[0]
            assert root not in FORBIDDEN, f"{path.name} imports {name}"
            if root == "dudo":
                assert name.startswith(ALLOWED_PROJECT), f"{path.name} imports {name}"


# -- the layers of the whole package ----------------------------------------------------


def _names(text: str) -> set[str]:
    return set(text.split())


# Each layer and what it may import besides itself (of this project; any library is its
# own business). Bottom first: a layer may import only layers above it in this table.
# docs/architecture.md's "Layers" points here.
LAYERS: dict[str, set[str]] = {
    "engine": set(),  # the rules of one game: pure
    # the official Python client, dudo_client (protocol/python, its own package on PyPI):
    # aiohttp and msgspec only, nothing of ours
    "client": set(),
    "wire": {"engine"},  # the published protocols, key names, entry signatures
    "bots": {"engine"},  # a seat's view in, an action out
    "text": {"engine"},  # a table as text, typed commands as actions
    "auth": {"wire"},  # the deployment's credentials; an app's identities
    "entity": {"wire"},  # what the partition loop hosts, and what entities send
    "table": {"engine", "wire", "bots", "auth", "entity"},  # one table (an entity)
    "director": {"engine", "wire", "bots", "auth", "entity"},  # tournaments, ratings
    "infra": {"wire", "auth"},  # Redis clients, outages, logs, local processes, buckets
    "worker": {"wire", "auth", "entity", "infra"},  # the partition loop: hosts ANY entity
    "link": {"wire", "auth", "infra"},  # a gateway's side of the streams, its tokens
    "gateway": {"engine", "wire", "infra", "link"},  # the web gateway
    "chat": {"engine", "wire", "auth", "text", "infra", "link"},  # the chat gateways
    # the programs `dudo` starts: the one place that composes the layers
    "run": _names(
        "engine wire bots text auth entity table director infra worker link gateway chat client"
    ),
    # operator tools, and the processes of a deployment on one machine (bench, chaos, kits)
    "ops": _names("engine wire auth entity table director infra worker"),
    "conformance": {"engine", "wire", "infra", "client", "ops"},
    # measurements and fault runs: everything below but each other
    "bench": _names(
        "engine wire bots auth entity table director infra worker link gateway client run ops"
    ),
    "chaos": _names(
        "engine wire bots auth entity table director infra worker link gateway client run ops"
    ),
    "cli": set(),  # filled below: everything
}
LAYERS["cli"] = set(LAYERS) - {"cli"}

# A module's layer is the package it sits in (dudo.<layer>...): the folders are the layers.
ENTRY = {"dudo", "dudo.__main__"}  # the package and `python -m dudo`: the command line

SERVICES = Path(__file__).resolve().parents[1] / "services"
CLIENT = Path(__file__).resolve().parents[1] / "protocol" / "python"  # dudo_client
OURS = ("dudo", "dudo_client")


def _modules() -> dict[str, Path]:
    found = {}
    for root, package in ((SERVICES, "dudo"), (CLIENT, "dudo_client")):
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def import_graph() -> tuple[dict[str, set[str]], list[tuple[str, str]]]:
    """Every module's ``dudo.*`` imports (at the top, inside functions, for type checks
    alike) as modules of this package; and the ``(module, name)`` of every import of a
    private name (``_x``) from another module."""
    modules = _modules()
    edges: dict[str, set[str]] = {}
    private: list[tuple[str, str]] = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] in OURS)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source.split(".")[0] not in OURS:
                    continue
                for alias in node.names:
                    if f"{source}.{alias.name}" in modules:
                        found.add(f"{source}.{alias.name}")  # a module imported by name
                    else:
                        found.add(source)
                        if alias.name.startswith("_"):
                            private.append((name, f"{source}.{alias.name}"))
        edges[name] = {m for m in found if m in modules and m != name}
    return edges, private


def layer_of(module: str) -> str:
    if module in ENTRY:
        return "cli"
    if module.split(".")[0] == "dudo_client":
        return "client"
    layer = module.split(".")[1]
    if layer in LAYERS:
        return layer
    raise AssertionError(f"{module} sits in no layer's package")


def circles(edges: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[tuple[str, ...]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.add(tuple(sorted(group)))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer_and_every_layer_a_rule() -> None:
    edges, _ = import_graph()
    assert set(LAYERS["cli"]) | {"cli"} == set(LAYERS)
    order = list(LAYERS)
    for n, (layer, allowed) in enumerate(LAYERS.items()):  # so the layers make no circle
        assert allowed <= set(order[:n]), f"{layer} may import a layer after it"
    for module in edges:
        assert layer_of(module) in LAYERS


def test_every_module_sits_in_its_layers_package() -> None:
    modules = set(import_graph()[0])
    stray = sorted(
        m for m in modules - ENTRY if layer_of(m) == "client" or m.split(".")[1] not in LAYERS
    )
    stray = [m for m in stray if not m.startswith("dudo_client")]
    assert not stray, f"modules outside the layers' packages: {stray}"
    flat = sorted(m for m, path in _modules().items() if path.parent.name == "dudo")
    assert flat == ["dudo", "dudo.__main__"], f"flat modules: {flat}"


def test_every_package_names_its_public_faces() -> None:
    """Each package's ``__init__`` lists what the rest may use (``__all__``), and each
    name it lists is there: the modules behind a face are its private business."""
    import importlib

    for module, path in sorted(_modules().items()):
        if path.name != "__init__.py":
            continue
        package = importlib.import_module(module)
        assert isinstance(getattr(package, "__all__", None), list), f"{module}: no __all__"
        missing = [n for n in package.__all__ if not hasattr(package, n)]
        assert not missing, f"{module}.__all__ names what it lacks: {missing}"


def across_packages() -> list[tuple[str, str, list[str]]]:
    """Every import of one of our packages from another (or from the flat modules):
    ``(importing module, the module named after "from", the names imported)``."""
    found = []
    for name, path in _modules().items():
        if not name.startswith("dudo."):
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        mine = name.split(".")[1] if name.count(".") else None
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dudo."):
                source = node.module or ""
            else:
                continue
            parts = source.split(".")
            if parts[0] == "dudo" and len(parts) > 1 and parts[1] != mine:
                found.append((name, source, [a.name for a in node.names]))
    return found


def test_other_packages_are_used_through_their_faces() -> None:
    """One way in (issue 56): a package is imported from its face, ``from ..wire import
    keys, message``, never from a module behind it, and only what its ``__all__`` lists
    (a module of its own counts, where it is listed: ``bench``'s targets)."""
    import importlib

    behind, unlisted = [], []
    for module, source, names in across_packages():
        if source.count(".") > 1:
            behind.append(f"{module}: from {source}")
            continue
        face = importlib.import_module(source).__all__
        unlisted += [f"{module}: {source}.{n}" for n in names if n not in face]
    assert behind == [], f"imports from behind a face: {behind[:10]}"
    assert unlisted == [], f"names a face does not list: {unlisted[:10]}"
    assert len(across_packages()) > 200  # the check sees the imports (272 today)


def test_measured_figures_live_in_the_docs_not_the_code() -> None:
    """Figures age with the machine and the libraries: the code points to
    docs/benchmarks.md ("Measurements behind the code") instead of quoting them."""
    quoted = [
        f"{path.relative_to(SERVICES.parent)}:{n}"
        for path in _modules().values()
        if path.parent.name != "bench"  # the benchmarks print figures; they quote none
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "µs" in line or "measured on" in line.lower()
    ]
    assert not quoted, quoted


MAX_LINES = 500  # a module a newcomer reads in one sitting
GENERATED = {"dudo_client.messages"}  # written by `dudo schemas write`: read the schemas


def test_no_module_is_longer_than_a_sitting() -> None:
    long = {
        name: n
        for name, path in _modules().items()
        if name not in GENERATED
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"over {MAX_LINES} lines: {long}"


def test_no_import_runs_against_the_layers() -> None:
    edges, _ = import_graph()
    found = {
        (src, dst)
        for src, targets in edges.items()
        for dst in targets
        if layer_of(dst) != layer_of(src) and layer_of(dst) not in LAYERS[layer_of(src)]
    }
    assert not found, "imports against the layers: " + ", ".join(
        f"{s} ({layer_of(s)}) -> {d} ({layer_of(d)})" for s, d in sorted(found)
    )


def test_no_import_circles() -> None:
    found = circles(import_graph()[0])
    assert not found, f"import circles: {sorted(found)}"


def test_no_module_imports_another_modules_private_name() -> None:
    _, private = import_graph()
    assert private == [], private


def layers_table() -> str:
    """LAYERS as docs/architecture.md shows it, bottom first."""
    lines = ["| layer | may import |", "|---|---|"]
    for layer, allowed in LAYERS.items():
        shown = (
            "everything"
            if layer == "cli"
            else ", ".join(name for name in LAYERS if name in allowed)
        )
        lines.append(f"| {layer} | {shown or '(nothing of ours)'} |")
    return "\n".join(lines)


def test_the_architecture_page_shows_these_layers() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(
        encoding="utf-8"
    )
    begin, end = "<!-- layers:begin -->\n", "\n<!-- layers:end -->"
    shown = page[page.index(begin) + len(begin) : page.index(end)]
    assert shown == layers_table(), (
        "docs/architecture.md's layers differ: run `python -m tests.test_architecture`"
    )


def test_the_architecture_page_names_every_module_of_each_package() -> None:
    """The page's package table ("The packages") names each package's every module in
    its row: a module added to a package without a word there fails here."""
    import re

    page = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(
        encoding="utf-8"
    )
    table = page.split("### The packages", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        found = re.match(r"\| `([a-z_]+)/` \|.*\| (.*) \|$", line)
        if found:
            rows[found.group(1)] = set(re.findall(r"`([a-z_]+)`", found.group(2)))
    dudo = SERVICES / "dudo"
    packages = sorted(p.parent.name for p in dudo.glob("*/__init__.py"))
    assert sorted(rows) == packages, "a package without its row, or a row without its package"
    for package, named in rows.items():
        modules = {p.stem for p in (dudo / package).glob("*.py") if p.stem != "__init__"}
        assert modules <= named, f"{package}/: not on the page: {sorted(modules - named)}"


# The browser app's modules (services/dudo/gateway/static), bottom first: each imports
# (statically, or with a dynamic import()) only modules before it, so none is in a circle.
# The service worker stands apart: the page registers it, nothing imports it.
PAGE_MODULES = (
    "words", "presets", "odds", "dudo-client", "i18n", "ui", "session", "stats",
    "reactions", "reveal", "help", "history", "lobby", "table", "organize", "cup", "app",
    "sw",
)  # fmt: skip


def page_imports(source: str) -> set[str]:
    """The page's own modules a JavaScript module imports (comments left out: a JSDoc
    type may name a module it does not import)."""
    import re

    code = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    code = re.sub(r"^\s*//.*$", "", code, flags=re.M)
    static = re.findall(r'^import\s[^;]*?\bfrom\s+"\./([\w-]+)\.js"', code, flags=re.M)
    dynamic = re.findall(r'\bimport\(\s*"\./([\w-]+)\.js"\s*\)', code)
    return {*static, *dynamic}


def test_the_pages_modules_import_down_their_order_only() -> None:
    static = SERVICES / "dudo" / "gateway" / "static"
    modules = {p.stem: p for p in static.glob("*.js")}
    assert sorted(modules) == sorted(PAGE_MODULES), "a module missing from PAGE_MODULES"
    wrong = {}
    for name, path in modules.items():
        below = set(PAGE_MODULES[: PAGE_MODULES.index(name)])
        upward = page_imports(path.read_text(encoding="utf-8")) - below
        if upward:
            wrong[name] = sorted(upward)
    assert wrong == {}, f"imports up the page's order (or in a circle): {wrong}"
    # The check sees what it must: a dynamic import and a static one, not a comment's.
    seen = page_imports('import { a } from "./ui.js";\n/** {import("./x.js").T} */\n'
                        'f(() => import("./cup.js"));')  # fmt: skip
    assert seen == {"ui", "cup"}


# The tests mirror the layers: a layer's tests sit in tests/<layer>/ (tests/clients/ for
# the client packages), the whole system's in e2e/, integration/ and security/. Only
# these look at the whole tree (its layers, its extension points, its handlers, its
# deployment, its release, its JavaScript) and sit at the top, beside shared helpers.
WHOLE_TREE_TESTS = {
    "test_architecture", "test_extensions", "test_handlers", "test_deploy", "test_release",
    "test_eslint",
}  # fmt: skip
SYSTEM_TESTS = {"e2e", "integration", "security", "clients", "data"}


def test_the_tests_mirror_the_layers() -> None:
    tests = Path(__file__).resolve().parent
    flat = {p.stem for p in tests.glob("test_*.py")}
    assert flat == WHOLE_TREE_TESTS, f"a layer's test at the top: {sorted(flat - WHOLE_TREE_TESTS)}"
    folders = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    strays = folders - set(LAYERS) - SYSTEM_TESTS
    assert strays == set(), f"a test folder named for no layer: {sorted(strays)}"


# Functions allowed to do more (radon's cyclomatic complexity over 30), each named in
# docs/architecture.md ("Layers") with why. None today.
COMPLEX_ALLOWED: dict[str, str] = {}
MOST_COMPLEX = 30


def _blocks(blocks: list[Any]) -> Iterator[Any]:
    """Every function of radon's blocks: methods, closures and inner classes' too."""
    from radon.visitors import Class

    for block in blocks:
        if isinstance(block, Class):
            yield from _blocks([*block.methods, *block.inner_classes])
        else:
            yield block
            yield from _blocks(block.closures)


def test_no_function_does_several_jobs() -> None:
    """A function past complexity 30 does several jobs (issue 56 found eight, named by
    their own comments: kicks, order, arrivals and the report in one): split it where
    its comments say where, or name it in COMPLEX_ALLOWED and the page with why."""
    from radon.complexity import cc_visit

    found = {}
    for path in [*SERVICES.rglob("*.py"), *(CLIENT / "dudo_client").rglob("*.py")]:
        source = path.read_text(encoding="utf-8")
        for block in _blocks(cc_visit(source)):
            where = f"{path.relative_to(SERVICES.parent)}:{block.fullname}"
            if block.complexity > MOST_COMPLEX and where not in COMPLEX_ALLOWED:
                found[where] = block.complexity
    assert found == {}, found


if __name__ == "__main__":  # rewrite the page's copy of the layers
    _page = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
    _text = _page.read_text(encoding="utf-8")
    _begin, _end = "<!-- layers:begin -->\n", "\n<!-- layers:end -->"
    _head, _rest = _text.split(_begin, 1)
    _page.write_text(_head + _begin + layers_table() + _end + _rest.split(_end, 1)[1])


# What the client package may import: what its own pyproject.toml installs, and Python.
CLIENT_DEPENDENCIES = {"aiohttp", "msgspec", "dudo_client"}


def test_the_client_package_imports_only_its_own_dependencies() -> None:
    """dudo_client is installed alone (``pip install dudo-client``): anything it imports
    beyond aiohttp, msgspec and the standard library would be missing there."""
    import sys

    for path in (CLIENT / "dudo_client").rglob("*.py"):
        for name in imports(path):
            root = name.split(".")[0]
            assert root in CLIENT_DEPENDENCIES or root in sys.stdlib_module_names, (
                f"{path.relative_to(CLIENT)} imports {name}"
            )
    pyproject = (CLIENT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"aiohttp>=' in pyproject and '"msgspec>=' in pyproject
