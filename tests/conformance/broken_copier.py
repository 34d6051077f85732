"""A deliberately broken transactional copier (the built-in confluent-kafka copier underneath).

    python broken_copier.py --bootstrap-server HOST:PORT --input-topic IN ... (the contract)

It commits each transaction's records but never sends the consumer's offsets to it, so every
new life copies its partition again from the start: the output holds records twice once the
copier is bounced. The transactions scenarios must fail it.
"""

from __future__ import annotations

import sys

from kafka_emu.conformance.clients import confluent_copier


class OffsetlessCopier(confluent_copier.Copier):
    def copy_one(self, records: list) -> None:
        p = self.producer
        p.begin_transaction()
        for m in records:
            p.produce(self.args.output_topic, value=m.value(), partition=m.partition())
        p.commit_transaction(60)  # no send_offsets_to_transaction: the bug
        self.remaining -= len(records)
        self.consumed += len(records)
        self.total += len(records)


if __name__ == "__main__":
    confluent_copier.Copier = OffsetlessCopier  # main() builds this class
    sys.exit(confluent_copier.main())
