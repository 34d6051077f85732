"""What a running broker keeps for security, beside its config: the credential store (SCRAM
credentials change at run time through AlterUserScramCredentials) and the TLS material (the
server's SSL context, and the generated CA's files). Attached to the Broker on first use."""

from __future__ import annotations

from typing import Any

from .mechanisms import Credentials


class BrokerSecurity:
    def __init__(self, config) -> None:
        self.config = config.security
        self.credentials = Credentials(self.config.users)
        self.tls: Any = None  # tls.TlsMaterial once the server has made or loaded it


def security_of(broker) -> BrokerSecurity:
    found = getattr(broker, "security", None)
    if found is None:
        found = broker.security = BrokerSecurity(broker.config)
    return found
