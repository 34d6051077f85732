"""The conformance kit: Kafka's consumer system-test scenarios against any client, in seconds.

Kafka's own system tests (``tests/kafkatest/tests/client/consumer_test.py``) drive clients
through the VerifiableConsumer / VerifiableProducer programs and judge them from the events
those print. This package does the same against kafka-emu:

- ``contract``: the programs' flags and JSON events (what any external client implements);
- ``lines``: what the kit accepts from a client's stdout (every form the contract allows);
- ``profiles``: how a program takes its flags and properties and what it lacks (Kafka's Java
  clients, librdkafka's ``kafkatest_verifiable_client``, the documented contract, the kit's
  own, or a user's TOML/JSON file), chosen or detected from ``--help``;
- ``clients``: the kit's own verifiable clients (confluent-kafka, kafka-python, aiokafka,
  kafkajs), what each cannot do, and the client bugs found with their evidence;
- ``process``: running a client program, reading its events, SIGTERM / SIGKILL;
- ``record``: the merged event log and the tracker that replays it as Kafka's event handlers do;
- ``verdicts``: the checks, from the clients' events; ``timeline_rules``: those from the
  emulator's timeline, and when it saw each client leave (where ownership ends);
- ``replay``: recorded event streams (a failed run's, or hand-written ones) judged offline;
- ``harness``: one scenario's emulator, consumers, records, waits, virtual time and faults;
- ``scenarios``: the catalogue; ``runner``: one verdict per scenario, JUnit XML, traces;
- ``cli``: ``kafka-emu conformance``.

Both group protocols: ``--group-protocol consumer`` runs the consumers on KIP-848's protocol, as
Kafka's ``consumer_test.py`` matrix does; a scenario that means nothing there says why
(``Scenario.not_on``) and is skipped, and the server-side rules read member epochs and target
assignments instead of generations.
"""
