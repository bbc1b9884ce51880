"""A real Matrix homeserver for the tests (Synapse, the reference server, on SQLite, on a
free port, in a temp dir) and a plain Matrix client that syncs and sends over HTTP, as
people's clients do.

Synapse is a Python program with dependencies of its own, so it lives in its own
virtual environment: ``.synapse/`` in the checkout (``.ci/run`` makes it:
``python3 -m venv .synapse && .synapse/bin/pip install matrix-synapse``) or any
``synapse_homeserver`` on PATH. Without it the tests that need it skip with the reason,
except in CI (and the README's test command), where that is a failure.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from .servers import free_port, require_binary

SECRET = "dudo-tests-shared-secret"
# Rate limits out of the way: the tests send as fast as people never do.
FAST = {"per_second": 1000, "burst_count": 1000}
CONFIG = {
    "server_name": "localhost",
    "report_stats": False,
    "registration_shared_secret": SECRET,
    "macaroon_secret_key": "dudo-tests-macaroon",
    "form_secret": "dudo-tests-form",
    "trusted_key_servers": [],
    "suppress_key_server_warning": True,
    "enable_metrics": False,
    "presence": {"enabled": False},
    "rc_message": FAST,
    "rc_registration": FAST,
    "rc_joins": {"local": FAST, "remote": FAST},
    "rc_invites": {"per_room": FAST, "per_user": FAST, "per_issuer": FAST},
    "rc_login": {"address": FAST, "account": FAST, "failed_attempts": FAST},
    "rc_presence": {"per_user": FAST},
}

LISTENER = {
    "type": "http",
    "tls": False,
    "x_forwarded": False,
    "bind_addresses": ["127.0.0.1"],
    "resources": [{"names": ["client"]}],
}


class _PortTaken(Exception):
    """Something else listens on the port chosen for Synapse."""


class SynapseServer:
    """Synapse on 127.0.0.1:<free port>, its database and keys in ``folder``."""

    def __init__(self, folder: Path, *, default_limits: bool = False) -> None:
        """``default_limits``: messages rate-limited as Synapse does out of the box (0.2 a
        second after a burst of 10), as on a homeserver whose operator does not exempt
        our bot; the test's people are exempted (:meth:`exempt`), they are not what is
        measured."""
        program = require_binary("synapse_homeserver")
        self.default_limits = default_limits
        self._admin: str | None = None
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        path = folder / "homeserver.yaml"
        self.command = [program, "-c", str(path)]
        # Another test process may take the free port while Synapse starts (seconds):
        # then another port, as RedisServer does.
        for attempt in range(3):
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            config = {
                **{k: v for k, v in CONFIG.items() if not (default_limits and k == "rc_message")},
                "pid_file": str(folder / "homeserver.pid"),
                "signing_key_path": str(folder / "signing.key"),
                "media_store_path": str(folder / "media"),
                "database": {"name": "sqlite3", "args": {"database": str(folder / "home.db")}},
                "listeners": [LISTENER | {"port": self.port}],
            }
            path.write_text(json.dumps(config))  # JSON is YAML
            if attempt == 0:
                keys = [*self.command, "--generate-keys"]
                subprocess.run(keys, check=True, capture_output=True, cwd=folder, timeout=60)
            try:
                self.start()
                return
            except _PortTaken:
                continue
        raise AssertionError("synapse found no free port in three tries")

    def start(self) -> None:
        """Run it (again: the same port, database and keys) and wait until it answers."""
        self.log = (self.folder / "synapse.out").open("a")
        self.proc = subprocess.Popen(
            self.command, cwd=self.folder, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.call("GET", "/_matrix/client/versions")
                break
            except (http.client.HTTPException, ValueError) as exc:  # not Synapse there
                self.stop()
                raise _PortTaken(str(exc)) from exc
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    said = (self.folder / "synapse.out").read_text()[-3000:]
                    if "Address already in use" in said:
                        raise _PortTaken(said) from None
                    raise AssertionError("synapse did not start: " + said) from None
                time.sleep(0.2)

    def call(
        self, method: str, path: str, body: dict[str, Any] | None = None, token: str | None = None
    ) -> dict[str, Any]:
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode() if body is not None else None,
            method=method,
            headers={"Content-Type": "application/json"}
            | ({"Authorization": f"Bearer {token}"} if token else {}),
        )
        with urllib.request.urlopen(request, timeout=40) as answer:
            return json.loads(answer.read() or b"{}")

    def register(self, name: str, password: str = "secret-pw", admin: bool = False) -> str:
        """A new user (the admin API's shared-secret registration); their user id."""
        return str(self._register(name, password, admin)["user_id"])

    def _register(self, name: str, password: str, admin: bool) -> dict[str, Any]:
        nonce = self.call("GET", "/_synapse/admin/v1/register")["nonce"]
        mac = hmac.new(SECRET.encode(), digestmod=hashlib.sha1)
        role = b"admin" if admin else b"notadmin"
        mac.update(b"\x00".join([nonce.encode(), name.encode(), password.encode(), role]))
        body = {"nonce": nonce, "username": name, "password": password, "admin": admin,
                "mac": mac.hexdigest()}  # fmt: skip
        return self.call("POST", "/_synapse/admin/v1/register", body)

    def exempt(self, user_id: str) -> None:
        """No message rate limit for ``user_id`` (what an operator does for a bot it
        trusts: the admin API's ``override_ratelimit``)."""
        if self._admin is None:
            self._admin = str(self._register("operator", "secret-pw", True)["access_token"])
        path = f"/_synapse/admin/v1/users/{urllib.parse.quote(user_id)}/override_ratelimit"
        self.call("POST", path, {"messages_per_second": 0, "burst_count": 0}, self._admin)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class MatrixPerson:
    """Someone on the homeserver: logged in, syncing in a thread; every event of every
    room they are in kept in ``seen`` as (room id, event), in order; invitations to
    direct chats accepted at once."""

    def __init__(self, server: SynapseServer, name: str, password: str = "secret-pw") -> None:
        self.server = server
        self.user_id = server.register(name, password)
        login = {"type": "m.login.password", "password": password,
                 "identifier": {"type": "m.id.user", "user": name}}  # fmt: skip
        self.token = server.call("POST", "/_matrix/client/v3/login", login)["access_token"]
        if server.default_limits:
            server.exempt(self.user_id)
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.invited: list[tuple[str, str]] = []  # (room id, inviter)
        self.lock = threading.Lock()
        self._txn = 0
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._sync, daemon=True)
        self.thread.start()

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.server.call(method, path, body, self.token)

    def create_room(self, alias: str) -> str:
        body = {"preset": "public_chat", "room_alias_name": alias, "name": alias}
        return str(self.call("POST", "/_matrix/client/v3/createRoom", body)["room_id"])

    def join(self, room: str) -> str:
        quoted = urllib.parse.quote(room)
        return str(self.call("POST", f"/_matrix/client/v3/join/{quoted}", {})["room_id"])

    def leave(self, room_id: str) -> None:
        self.call("POST", f"/_matrix/client/v3/rooms/{urllib.parse.quote(room_id)}/leave", {})

    def send(self, room_id: str, content: dict[str, Any], kind: str = "m.room.message") -> str:
        self._txn += 1
        path = (f"/_matrix/client/v3/rooms/{urllib.parse.quote(room_id)}/send/{kind}/"
                f"t{time.time_ns()}-{self._txn}")  # fmt: skip
        return str(self.call("PUT", path, content)["event_id"])

    def say(self, room_id: str, text: str) -> str:
        return self.send(room_id, {"msgtype": "m.text", "body": text})

    def react(self, room_id: str, event_id: str, key: str) -> str:
        relates = {"rel_type": "m.annotation", "event_id": event_id, "key": key}
        return self.send(room_id, {"m.relates_to": relates}, "m.reaction")

    def rename(self, name: str) -> None:
        path = f"/_matrix/client/v3/profile/{urllib.parse.quote(self.user_id)}/displayname"
        self.call("PUT", path, {"displayname": name})

    def events(self, room_id: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [e for r, e in self.seen if room_id is None or r == room_id]

    def wait_for(self, test: Any, timeout: float = 30, what: str = "an event") -> dict[str, Any]:
        """The first event seen (in any room) for which ``test(room_id, event)`` holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                found = next((e for r, e in self.seen if test(r, e)), None)
            if found is not None:
                return found
            time.sleep(0.05)
        with self.lock:
            recent = [(r[:8], e.get("type"), (e.get("content") or {}).get("body"))
                      for r, e in self.seen[-12:]]  # fmt: skip
        raise AssertionError(f"{self.user_id}: no {what} in {timeout} s; last seen: {recent}")

    def stop(self) -> None:
        self._stop.set()

    def _sync(self) -> None:
        since: str | None = None
        while not self._stop.is_set():
            query = {"timeout": "5000"} | ({"since": since} if since else {})
            try:
                data = self.call("GET", "/_matrix/client/v3/sync?" + urllib.parse.urlencode(query))
            except (OSError, urllib.error.URLError):
                time.sleep(0.5)
                continue
            since = data["next_batch"]
            rooms = data.get("rooms") or {}
            for room_id in rooms.get("invite") or {}:
                try:
                    self.join(room_id)
                except (OSError, urllib.error.URLError):
                    continue
            with self.lock:
                for room_id, joined in (rooms.get("join") or {}).items():
                    for event in (joined.get("timeline") or {}).get("events") or ():
                        self.seen.append((room_id, event))
