"""What a test can make happen and see: time, faults, group operations, the timeline.

Every operation is declared once in ``operations.OPERATIONS`` (each module of ``control/ops``
registers its own); the Python handle, the HTTP endpoint and ``kafka-emu ctl`` all run them from
that table. The coordinator stays pure: it only gains plain commands; clocks and faults live here.
"""
