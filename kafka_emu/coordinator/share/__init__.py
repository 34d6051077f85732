"""Share groups (KIP-932): the coordinator's third group type. Membership and assignment live
beside the consumer-protocol pieces; each share-partition's delivery state (acquired,
acknowledged, archived, locks, delivery counts) is its own pure module timed by now_ms.

Membership (this package's ``model``, ``heartbeat``, ``assignor``, ``shared``, ``config``):
members send ShareGroupHeartbeat; the coordinator computes a target assignment with the
``simple`` assignor, where a partition may go to several members, and each member takes its
target at once (no revocation). Share groups live in ``core.share_groups``; a group id names one
group of one type (classic, consumer or share), never two.

Nothing is imported here at package import: coordinator/config.py imports ``share.config`` and
the rest imports the config, so the submodules are named where used (``share.heartbeat``, ...).
"""
