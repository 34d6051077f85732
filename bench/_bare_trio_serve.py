"""The floor of a trio server's start, for bench_broker's start table: no kafka-emu at all.

    python bench/_bare_trio_serve.py

Imports trio, listens on 127.0.0.1 port 0, prints ``host:port`` (as ``kafka-emu serve`` does),
and answers every request on the first connection with one fixed ApiVersions v0 frame (its
correlation id, error 0, ApiVersions 0-3), and waits to be stopped once the client has gone. Whatever a
``kafka-emu serve`` takes beyond this, from exec to its first answer, is kafka-emu's (its
modules, the standard-library modules only it needs, its argument parsing and state).
"""

import trio

# correlation id (filled in), error_code 0, [api_key 18, min 0, max 3]
_BODY = (0).to_bytes(2, "big") + (1).to_bytes(4, "big") + bytes.fromhex("001200000003")


async def main() -> None:
    listeners = await trio.open_tcp_listeners(0, host=b"127.0.0.1")
    host, port = listeners[0].socket.getsockname()[:2]
    print(f"{host}:{port}", flush=True)
    stream = await listeners[0].accept()
    data = b""
    while True:
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = await stream.receive_some(65536)
            if not chunk:  # wait to be stopped, as a serve does (not timed: Python's exit)
                await trio.sleep_forever()
            data += chunk
        size = int.from_bytes(data[:4], "big")
        frame, data = data[4:4 + size], data[4 + size:]
        answer = frame[4:8] + _BODY
        await stream.send_all(len(answer).to_bytes(4, "big") + answer)


if __name__ == "__main__":
    trio.run(main)
