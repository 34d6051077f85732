"""Open a page in headless Chromium (Debian's /usr/bin/chromium) over the DevTools protocol:
console errors, exceptions, network requests and what the page shows."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import websocket

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--remote-debugging-port=0", "--remote-allow-origins=*"]


class Page:
    def __init__(self, ws) -> None:
        self.ws = ws
        self.ids = iter(range(1, 10**9))
        self.events: list[dict] = []

    def call(self, method: str, **params):
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, method: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        for msg in self.events:
            if msg.get("method") == method:
                return msg
        self.ws.settimeout(timeout)
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            self.events.append(msg)
            if msg.get("method") == method:
                return msg
        raise AssertionError(f"no {method} within {timeout} s")

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill chromium and every process of its group, and wait until none is left."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


@contextlib.contextmanager
def browse(path: Path):
    """A loaded page in headless Chromium: yields the Page (evaluate(), call(), events)."""
    # Chromium's helper processes (renderer, crash handler) can still be writing into the
    # profile when the browser itself is killed, and the directory's removal then fails with
    # "Directory not empty". Chromium runs in a session of its own so the whole process group
    # goes at once, and the teardown waits until the group is gone before the profile goes.
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            port = None
            deadline = time.monotonic() + 60
            while port is None and time.monotonic() < deadline:
                line = proc.stderr.readline()
                if not line and proc.poll() is not None:
                    raise AssertionError(f"chromium exited with {proc.returncode}")
                m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
                if m:
                    port = int(m.group(1))
            assert port is not None, "chromium never said where DevTools listens"
            targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                                       timeout=30))
            target = next(t for t in targets if t["type"] == "page")
            ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=120)
            try:
                page = Page(ws)
                for domain in ("Runtime", "Log", "Page", "Network"):
                    page.call(f"{domain}.enable")
                page.call("Page.navigate", url=path.resolve().as_uri())
                page.wait_for("Page.loadEventFired", timeout=120)
                yield page
            finally:
                ws.close()
        finally:
            _kill_group(proc)


def errors(events: list[dict]) -> list[dict]:
    return [e for e in events if e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Runtime.consoleAPICalled"
                and e["params"]["type"] in ("error", "assert"))
            or (e.get("method") == "Log.entryAdded"
                and e["params"]["entry"]["level"] == "error")]


def requests(events: list[dict]) -> list[str]:
    return [e["params"]["request"]["url"] for e in events
            if e.get("method") == "Network.requestWillBeSent"]


def open_page(path: Path, screenshot: Path | None = None) -> dict:
    """Load ``path`` and report {errors, requests, svgs, drawn, charts, text} once it has
    loaded."""
    with browse(path) as page:
        found = page.evaluate("""JSON.stringify({
            svgs: document.querySelectorAll('svg').length,
            charts: document.querySelectorAll('.js-plotly-plot').length,
            drawn: Array.from(document.querySelectorAll('.js-plotly-plot')).map(s => {
                const r = s.getBoundingClientRect();
                return {id: s.id, w: r.width, h: r.height,
                        shapes: s.querySelectorAll('path,rect,text').length};
            }),
            text: document.body.innerText})""")
        if screenshot is not None:
            import base64
            shot = page.call("Page.captureScreenshot", format="png",
                             captureBeyondViewport=True)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
        events = page.events
    result = json.loads(found)
    result["errors"] = errors(events)
    result["requests"] = requests(events)
    return result
