"""``OwnedBytes``: a request frame's own buffer, which nothing else holds or reuses.

A frame longer than one read is read straight into a buffer of its announced size
(protocol/framing.py's ``FrameBuffer.room``), one per frame and never reused. The log keeps a
Produce's batch from such a frame as a view of the buffer, its base offset and leader epoch
written in place (log/partition.py's ``append`` and ``append_plain``), instead of copying it
into a new bytes object. A large Produce (a confluent-kafka producer's batches run to hundreds
of KB) then skips a memcpy of its records: 3-4% of its CPU in process for a 500 KB request
(docs/performance-history.md). The page faults of keeping the bytes -- a fresh page every 4 KB,
since the log keeps every record -- stay: they move from the copy to the frame's buffer.

What that costs: the frame's first bytes of each kept batch are the log's from then on (the
decoded request's records read the offset the log gave them); and a frame of several
partitions' batches is freed when the last of them leaves the log (retention counts each
batch's own bytes). A plain ``bytearray`` is never kept so: its owner may reuse it.
"""

from __future__ import annotations


class OwnedBytes(bytearray):
    __slots__ = ()
