"""Security as Kafka has it, at the broker level (STYLE.md, third wave): listeners by security
protocol, TLS, SASL authentication at the connection, and ACL authorization as one check before
the handler. Nothing here is imported by the coordinator.

A connection's authenticated principal lives on ``broker.context.ConnectionInfo.principal``
(``User:ANONYMOUS`` until a listener's authentication says otherwise, as on Kafka).
"""
