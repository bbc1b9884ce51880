"""A real IRC server for the tests (Debian's ngIRCd, on a free port, in a temp dir) and a
plain IRC client that speaks the protocol line by line, as people's clients do.

Without ``ngircd`` the tests that need it skip with the reason, except in CI (and the
README's test command), where that is a failure: ``.ci/run`` installs it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .servers import free_port, require_binary

NGIRCD_CONF = """\
[Global]
Name = irc.dudo.test
Info = dudo tests
AdminInfo1 = dudo tests
AdminInfo2 = here
AdminEMail = nobody@dudo.test
Listen = 127.0.0.1
Ports = {port}
MotdPhrase = "dudo tests"
{user}
[Limits]
MaxConnectionsIP = 0
PingTimeout = 120
PongTimeout = 20
[Options]
DNS = no
Ident = no
PAM = no
{ssl}"""
NGIRCD_SSL = """\
[SSL]
CertFile = {cert}
KeyFile = {key}
Ports = {port}
"""


class IrcServer:
    """One ngIRCd, started and stopped by a test."""

    def __init__(self, folder: Path, tls: bool = False) -> None:
        self.binary = require_binary("ngircd")
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.port = free_port()
        self.tls_port: int | None = None
        self.cert: Path | None = None
        ssl = ""
        if tls:  # a self-signed certificate for 127.0.0.1; clients trust it by SSL_CERT_FILE
            self.tls_port, self.cert, key = free_port(), folder / "cert.pem", folder / "key.pem"
            subprocess.run(
                [require_binary("openssl"), "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                 "-keyout", str(key), "-out", str(self.cert), "-days", "2",
                 "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                check=True, capture_output=True,
            )  # fmt: skip
            key.chmod(0o644)  # ngIRCd reads it as nobody; a throwaway test key
            ssl = NGIRCD_SSL.format(cert=self.cert, key=key, port=self.tls_port)
        user = "ServerUID = 65534\nServerGID = 65534" if os.geteuid() == 0 else ""
        self.conf = folder / "ngircd.conf"
        self.conf.write_text(NGIRCD_CONF.format(port=self.port, user=user, ssl=ssl))
        self._start()

    def _start(self) -> None:
        self.log = open(self.folder / "ngircd.log", "ab")  # noqa: SIM115 - lives with the server
        self.proc = subprocess.Popen(
            [self.binary, "-n", "-f", str(self.conf)], stdout=self.log, stderr=self.log
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        raise RuntimeError(f"ngircd did not start: {(self.folder / 'ngircd.log').read_text()}")

    def restart(self, down_for: float = 1.0) -> None:
        """Stop it (everyone is disconnected), wait, start it again on the same port."""
        self.stop()
        time.sleep(down_for)
        self._start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


_PRIVMSG = re.compile(r"^:(?P<nick>[^!\s]+)!\S* PRIVMSG (?P<target>\S+) :(?P<text>.*)$")


class IrcPerson:
    """Someone in a channel: connects, joins, says things, and keeps every message that
    reaches them (channel and private) in order, for the test to wait on."""

    def __init__(self, port: int, nick: str, channel: str | None = None) -> None:
        self.nick = nick
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.settimeout(None)  # a quiet channel is no failure: the reader waits
        self.messages: queue.Queue[tuple[str, str, str]] = queue.Queue()
        self.seen: list[tuple[str, str, str]] = []  # (sender, target, text), as they came
        self.read_upto = 0  # how far a test has read ``seen`` (it may keep its place here)
        self.said_cursor = (0, 0)  # (line, offset) a search of what was said resumes from
        self._welcome = threading.Event()
        self._joined: set[str] = set()
        self._closed = False
        self._send(f"NICK {nick}")
        user = re.sub(r"[^A-Za-z0-9]", "x", nick)  # a nick may hold what a user name may not
        self._send(f"USER {user} 0 * :{nick}")
        threading.Thread(target=self._read, daemon=True).start()
        if not self._welcome.wait(10):
            raise RuntimeError(f"{nick} was not welcomed by the IRC server")
        if channel:
            self.join(channel)

    def join(self, channel: str) -> None:
        self._send(f"JOIN {channel}")
        deadline = time.monotonic() + 10
        while channel.lower() not in self._joined:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.nick} could not join {channel}")
            time.sleep(0.02)

    def say(self, target: str, text: str) -> None:
        self._send(f"PRIVMSG {target} :{text}")

    def wait_for(
        self,
        match: Callable[[str, str, str], bool] | str,
        timeout: float = 30.0,
    ) -> tuple[str, str, str]:
        """The next message (sender, target, text) that ``match`` accepts (a string:
        a regular expression searched in the text); earlier ones are passed over."""
        test = match if callable(match) else (lambda s, t, x: re.search(match, x) is not None)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                recent = "\n".join(f"{s} -> {t}: {x}" for s, t, x in self.seen[-15:])
                raise AssertionError(f"{self.nick} waited {timeout} s in vain; lately:\n{recent}")
            try:
                got = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if test(*got):
                return got

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._send("QUIT :bye")
        self.sock.close()

    def _send(self, line: str) -> None:
        self.sock.sendall(line.encode() + b"\r\n")

    def _read(self) -> None:
        buffer = b""
        while not self._closed:
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            buffer += data
            while b"\r\n" in buffer:
                raw, buffer = buffer.split(b"\r\n", 1)
                self._line(raw.decode(errors="replace"))

    def _line(self, line: str) -> None:
        if line.startswith("PING"):
            self._send("PONG" + line[4:])
            return
        parts = line.split()
        if len(parts) > 1 and parts[1] == "001":
            self._welcome.set()
        if len(parts) > 2 and parts[1] == "JOIN" and line.startswith(f":{self.nick}!"):
            self._joined.add(parts[2].lstrip(":").lower())
        found = _PRIVMSG.match(line)
        if found:
            got = (found["nick"], found["target"], found["text"])
            self.seen.append(got)
            self.messages.put(got)
