"""The codec stays pure: importing it must not pull in trio (STYLE: no I/O in protocol/)."""

import subprocess
import sys


def test_importing_protocol_does_not_import_trio():
    code = "import sys, kafka_emu.protocol; print('trio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
