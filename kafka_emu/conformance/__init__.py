"""The conformance kit: Kafka's consumer system-test scenarios against any client, in seconds.

Kafka's own system tests (``tests/kafkatest/tests/client/consumer_test.py``) drive clients
through the VerifiableConsumer / VerifiableProducer programs and judge them from the events
those print. This package does the same against kafka-emu:

- ``contract``: the programs' flags and JSON events (what any external client implements);
- ``clients``: the kit's own verifiable clients (confluent-kafka, kafka-python, aiokafka,
  kafkajs), what each cannot do, and the client bugs found with their evidence;
- ``process``: running a client program, reading its events, SIGTERM / SIGKILL;
- ``record``: the merged event log and the tracker that replays it as Kafka's event handlers do;
- ``verdicts``: the checks, from the clients' events and from the emulator's timeline;
- ``harness``: one scenario's emulator, consumers, records, waits, virtual time and faults;
- ``scenarios``: the catalogue; ``runner``: one verdict per scenario, JUnit XML, traces;
- ``cli``: ``kafka-emu conformance``.
"""
