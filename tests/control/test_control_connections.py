"""The control endpoint under many connections (issue 33, finding 6: a 10,000-connection flood
got 37% answered, the rest dropped in silence). Every connection gets an answer -- served, or a
503 once ``max_connections`` are being served -- and the endpoint answers as before once the
flood is over. The figures for 10,000 connections are bench/bench_control_flood.py's."""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from kafka_emu.testing.emulator import run_in_thread

from control_http_support import AUTH, client_of, endpoint_for

FLOOD = 300


def _request(port: int) -> bytes:
    return b"GET /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port


def _status_line_of(sock: socket.socket) -> bytes:
    answer = b""
    while b"\r\n" not in answer:
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    return answer.split(b"\r\n", 1)[0]


def _status_line(port: int, hold: list) -> bytes:
    """Open a connection, ask for /health, return the status line; the connection stays open
    (appended to ``hold``)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    hold.append(sock)
    sock.sendall(_request(port))
    return _status_line_of(sock)


def _serves_again(url: str) -> httpx.Response:
    """/health once the endpoint has noticed the closed connections (it sees them on its own
    loop, so ask until it has: at most the keep-alive timeout, 2 s, or a moment)."""
    with httpx.Client(base_url=url, headers=AUTH, timeout=30) as client:
        for _ in range(200):
            answer = client.get("/health", headers={"connection": "close"})
            if answer.status_code == 200:
                break
            time.sleep(0.05)
    return answer


def test_a_flood_of_connections_is_answered_and_the_endpoint_serves_on():
    with run_in_thread(control_port=0) as emu:
        port = int(emu.control_url.rsplit(":", 1)[1])
        held: list[socket.socket] = []
        try:  # all connected before any asks: more at once than the endpoint serves
            with ThreadPoolExecutor(32) as pool:
                held = list(pool.map(lambda _: socket.create_connection(("127.0.0.1", port),
                                                                        timeout=60),
                                     range(FLOOD)))
            for sock in held:
                sock.sendall(_request(port))
            lines = [_status_line_of(sock) for sock in held]
        finally:
            for sock in held:
                sock.close()
        statuses = {line.split(b" ")[1] if line.count(b" ") >= 2 else line for line in lines}
        assert statuses <= {b"200", b"503"}, statuses  # each got an answer, none was dropped
        assert _serves_again(emu.control_url).status_code == 200
        with client_of(emu) as client:
            assert client.get("/topics").status_code == 200
        assert emu.unexpected_errors() == []


def test_connections_over_the_limit_get_a_503_with_a_json_reason_not_silence():
    limit = 3
    with endpoint_for(max_connections=limit) as (url, _, errors):
        port = int(url.rsplit(":", 1)[1])
        held: list[socket.socket] = []
        try:
            # each answered once and kept open (keep-alive): the endpoint is at its limit
            assert [_status_line(port, held) for _ in range(limit)] == [b"HTTP/1.1 200 "] * limit
            with socket.create_connection(("127.0.0.1", port), timeout=30) as extra:
                extra.sendall(_request(port))
                answer = b""
                while chunk := extra.recv(65536):  # the server closes after the 503
                    answer += chunk
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 503 "), answer[:300]
            assert b"retry-after: 1" in head.lower()
            assert b"limit of 3 connections" in body, body
        finally:
            for sock in held:
                sock.close()
        assert _serves_again(url).status_code == 200  # once they are gone
    assert errors == []
