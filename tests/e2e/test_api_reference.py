"""Issue 52, item 5: the client packages' API reference, generated from their code by
`dudo api-reference` (pdoc for Python, TypeDoc for the npm package's types), as the
release workflow publishes it: every public name and method has its page or anchor, and
a warning (a broken link in a doc comment) fails it rather than shipping."""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dudo_client
from dudo_client import messages

from ..servers import require_binary

ROOT = Path(__file__).resolve().parents[2]


def _reference(out: Path, protocol: Path = ROOT / "protocol") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dudo", "api-reference", str(out), "--protocol", str(protocol)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_binary("node")
    out = tmp_path_factory.mktemp("reference")
    done = _reference(out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _ids(page: Path) -> set[str]:
    return set(re.findall(r'id="([A-Za-z_][\w.]*)"', page.read_text(encoding="utf-8")))


def test_the_python_reference_has_every_public_name_and_method(reference: Path) -> None:
    ids = _ids(reference / "python" / "dudo_client.html")
    missing = [name for name in dudo_client.__all__ if name not in ids and name != "__version__"]
    for cls in (dudo_client.DudoApi, dudo_client.DudoConnection):
        missing += [
            f"{cls.__name__}.{name}"
            for name, _ in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_") and f"{cls.__name__}.{name}" not in ids
        ]
    assert missing == []
    typed = _ids(reference / "python" / "dudo_client" / "messages.html")
    source = Path(messages.__file__).read_text(encoding="utf-8")
    generated = re.findall(r"^(?:class (\w+)\(|(\w+) = )", source, re.MULTILINE)
    names = [a or b for a, b in generated]  # every TypedDict, alias and the ErrorCode enum
    assert len(names) > 90 and [n for n in names if n not in typed] == []


def test_the_typescript_reference_has_every_class_and_message_type(reference: Path) -> None:
    js = reference / "js"
    for cls in ("DudoApi", "DudoConnection", "DudoError"):
        assert (js / "classes" / f"{cls}.html").is_file(), cls
    connection = (js / "classes" / "DudoConnection.html").read_text(encoding="utf-8")
    for member in ("play", "finished", "reason", "act", "close"):
        assert f'id="{member}"' in connection, member
    declared = re.findall(
        r"^export (?:interface|type) (\w+)",
        (ROOT / "protocol" / "js" / "messages.d.ts").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    pages = {p.stem for folder in ("interfaces", "types") for p in (js / folder).glob("*.html")}
    assert len(declared) > 90 and [n for n in declared if n not in pages] == []
    index = (reference / "index.html").read_text(encoding="utf-8")
    assert 'href="python/dudo_client.html"' in index and 'href="js/index.html"' in index


def test_a_broken_link_in_a_doc_comment_fails_the_reference(tmp_path: Path) -> None:
    require_binary("node")
    protocol = tmp_path / "protocol"
    shutil.copytree(ROOT / "protocol" / "js", protocol / "js",
                    ignore=shutil.ignore_patterns("node_modules"))  # fmt: skip
    types = protocol / "js" / "dudo-client.d.ts"
    types.write_text(types.read_text().replace(
        "/** Close for good:", "/** See {@link NoSuchThing}. Close for good:", 1))  # fmt: skip
    done = _reference(tmp_path / "out", protocol)
    assert done.returncode == 1 and "NoSuchThing" in done.stderr, done.stderr[-2000:]


def test_each_readme_says_where_its_reference_is() -> None:
    for readme in ("python", "js"):
        text = (ROOT / "protocol" / readme / "README.md").read_text(encoding="utf-8")
        section = text.split("## API reference", 1)[1].split("\n## ", 1)[0]
        assert "dudo api-reference" in section and "github.io" in section, readme
