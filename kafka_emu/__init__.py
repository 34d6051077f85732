"""kafka-emu: an in-memory Apache Kafka broker emulator centred on the classic group coordinator.

Start it with ``kafka-emu serve`` or embed it in tests (``kafka_emu.testing``, the pytest
fixtures ``kafka_emu``, ``kafka_emu_session`` and ``kafka_emu_factory``).
"""

# The one place the version is written: pyproject.toml reads it (setuptools dynamic version),
# ``kafka-emu --version`` prints it and the admin tools send it as their client software version.
__version__ = "0.1.0"
