"""Issue 52, item 4: the client packages' release workflow, ready to publish.

It cannot run here (it needs GitHub and the registries); what can be held here is held:
the workflow is valid for GitHub (its vendored schema, through check-jsonschema), it
checks the tag against both packages' versions and changelogs, it checks and tests the
built files before anything is published, and it publishes only those, with PyPI's
trusted publishing and npm's provenance. The packages' own files (the license, the
changelog in the sdist) are checked where they are built: tests/e2e/test_python_package.py
and test_js_package.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def test_the_workflow_is_valid_for_github() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema",
         "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_it_checks_and_tests_before_it_publishes_with_provenance() -> None:
    flow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert flow[True]["push"]["tags"] == ["client-v*"]  # (YAML reads `on` as true)
    jobs = flow["jobs"]
    steps = "\n".join(str(step.get("run", "")) for step in jobs["check"]["steps"])
    for needed in ("twine check --strict", "npm publish --dry-run", "__init__.py",
                   "package.json", "CHANGELOG.md", "tests/e2e/test_python_package.py",
                   "tests/e2e/test_js_package.py"):  # fmt: skip
        assert needed in steps, needed
    for job in ("pypi", "npm"):
        assert jobs[job]["needs"] == "check"
        assert jobs[job]["permissions"] == {"id-token": "write"}
    assert any(
        step.get("uses", "").startswith("pypa/gh-action-pypi-publish")
        for step in jobs["pypi"]["steps"]
    )
    # The API reference of the tagged code, made as the tests make it, on GitHub Pages.
    reference = jobs["reference"]
    assert reference["needs"] == "check"
    assert "dudo api-reference site" in "\n".join(str(s.get("run", "")) for s in reference["steps"])
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in reference["steps"])
    npm = "\n".join(str(step.get("run", "")) for step in jobs["npm"]["steps"])
    assert "npm publish --provenance" in npm
    assert "password" not in WORKFLOW.read_text(encoding="utf-8")  # no PyPI token kept


def test_both_packages_carry_one_version_with_a_changelog_section() -> None:
    """The workflow's first check, run here too: a tag names both packages."""
    init = (ROOT / "protocol" / "python" / "dudo_client" / "__init__.py").read_text()
    python = re.search(r'__version__ = "(.+)"', init)
    assert python is not None
    js = json.loads((ROOT / "protocol" / "js" / "package.json").read_text())["version"]
    assert python[1] == js
    for package in ("python", "js"):
        changelog = (ROOT / "protocol" / package / "CHANGELOG.md").read_text()
        assert f"\n## {js} " in changelog, package
        assert (ROOT / "protocol" / package / "LICENSE").read_text().startswith("MIT License")
    releasing = (ROOT / "RELEASING.md").read_text()
    assert ".github/workflows/release.yml" in releasing and "client-v" in releasing
