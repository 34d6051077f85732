"""Security as Kafka has it, at the broker level (STYLE.md, third wave): listeners by security
protocol, TLS, SASL authentication at the connection, and ACL authorization as one check before
the handler. Nothing here is imported by the coordinator.

A connection's authenticated principal lives on ``broker.context.ConnectionInfo.principal``
(``User:ANONYMOUS`` until a listener's authentication says otherwise, as on Kafka).

Authentication (the way in): ``config.py`` (the settings by Kafka's names, ``BrokerConfig.security``),
``listeners.py`` (listeners by security protocol; the server binds each, handlers answer with the
endpoints of the client's listener), ``tls.py`` (certificates, the handshake, the principal of a
client certificate), ``gate.py`` (the connection's one hook), ``sasl.py`` (SaslServerAuthenticator's
states at the connection), ``mechanisms.py`` and ``scram.py`` (the mechanisms, pure, time as
``now_ms``), ``state.py`` (what a running broker keeps: credentials, TLS material).
"""
