"""Helpers for tests that run a real ``deniable serve`` in a subprocess."""

from __future__ import annotations

import socket
import time
import urllib.request


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_serving(url: str, process, seconds: float = 60, why=lambda: "") -> None:
    """Poll ``url`` until it answers 200; fail if ``process`` exits or ``seconds`` pass first."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                assert response.status == 200
                return
        except OSError:
            assert process.poll() is None, f"the server exited: {why()}"
            assert time.monotonic() < deadline, f"the server did not answer {url} within {seconds:g} s"
            time.sleep(0.2)
