"""The transaction coordinator (KIP-98, KIP-447, KIP-890): pure, timed by now_ms, commands in and
outputs out (STYLE.md, third wave). Markers reach the partition logs through the broker, as Kafka
writes them; TxnOffsetCommit stays a group request in the group coordinator."""
