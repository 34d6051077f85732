"""Admin tools over the wire: a small synchronous client and the ``groups``/``versions`` commands.

Works against any Kafka-compatible broker, kafka-emu or Apache Kafka, through our one codec.
"""

from .client import AdminClient
from .connection import AdminError, BrokerConnection, BrokerError, UnsupportedApiError
from .model import ApiRow, GroupDescription, GroupListing, MemberDescription

__all__ = ["AdminClient", "AdminError", "ApiRow", "BrokerConnection", "BrokerError",
           "GroupDescription", "GroupListing", "MemberDescription", "UnsupportedApiError"]
