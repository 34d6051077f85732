"""The flags of Kafka's TransactionalMessageCopier, shared by the kit's built-in copiers.

As ``org.apache.kafka.tools.TransactionalMessageCopier`` declares them, plus the names the kit
also accepts: ``--bootstrap-server`` beside Kafka's ``--broker-list``, ``--group-id`` beside
``--consumer-group``.
"""

from __future__ import annotations

import argparse


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="copy an input partition to an output topic transactionally")
    p.add_argument("--bootstrap-server", "--broker-list", dest="bootstrap", required=True)
    p.add_argument("--input-topic", required=True)
    p.add_argument("--input-partition", type=int, default=0)
    p.add_argument("--output-topic", required=True)
    p.add_argument("--transactional-id", required=True)
    p.add_argument("--group-id", "--consumer-group", dest="group_id", default="-1")
    p.add_argument("--max-messages", type=int, default=-1)
    p.add_argument("--transaction-size", type=int, default=200)
    p.add_argument("--transaction-timeout", type=int, default=60000)
    p.add_argument("--enable-random-aborts", action="store_true")
    p.add_argument("--use-group-metadata", action="store_true")
    p.add_argument("--group-mode", action="store_true")
    return p.parse_args(argv)
