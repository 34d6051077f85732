"""A share consumer in a child process (explicit acknowledgement): it polls until it holds
records, prints their offsets as one line, then keeps its connection open without acknowledging
until it is killed. ``python share_child.py BOOTSTRAP GROUP TOPIC``"""

import sys
import time

from confluent_kafka import ShareConsumer

bootstrap, group, topic = sys.argv[1:4]
consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                          "share.acknowledgement.mode": "explicit"})
consumer.subscribe([topic])
while True:
    held = [m.offset() for m in consumer.poll(0.5) if m.error() is None]
    if held:
        print(" ".join(map(str, held)), flush=True)
        break
while True:  # holding, never acknowledging, never polling again
    time.sleep(1)
