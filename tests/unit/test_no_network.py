"""The conftest's network guard: loopback and Unix sockets work, anything else is
refused, and a test that tried (even one that swallowed the error) fails."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from conftest import NetworkAttempt

pytest_plugins = ["pytester"]


@pytest.mark.parametrize("family, address", [
    (socket.AF_INET, ("203.0.113.7", 443)),  # TEST-NET-3: never routed
    (socket.AF_INET6, ("2001:db8::1", 443)),
    (socket.AF_INET, ("example.com", 80)),  # a name needs DNS: refused before any lookup
])
def test_connections_off_the_machine_are_refused_and_recorded(network_attempts, family, address):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        with pytest.raises(NetworkAttempt):
            s.connect(address)
        with pytest.raises(NetworkAttempt):
            s.connect_ex(address)
    assert len(network_attempts) == 2
    network_attempts.clear()  # this test meant to try


def test_loopback_and_unix_sockets_work(tmp_path, network_attempts):
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET, "localhost")):
        with socket.socket(family) as server:
            server.bind((host, 0))
            server.listen()
            with socket.create_connection(server.getsockname()[:2], timeout=5):
                pass
    path = str(tmp_path / "s.sock")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen()
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
    assert network_attempts == []


def test_a_test_that_swallows_the_refusal_still_fails(pytester):
    pytester.makeconftest((Path(__file__).parents[1] / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(
        """
        import socket

        def test_phones_home_quietly():
            try:
                socket.create_connection(("198.51.100.1", 80), timeout=1)
            except OSError:
                pass  # as telemetry does
        """
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*network connection attempted*198.51.100.1*"])
