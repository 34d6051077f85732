"""Share groups (KIP-932): the coordinator's third group type. Membership and assignment live
beside the consumer-protocol pieces; each share-partition's delivery state (acquired,
acknowledged, archived, locks, delivery counts) is its own pure module timed by now_ms."""
