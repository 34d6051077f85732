"""TLS for SSL and SASL_SSL listeners: certificates, the server's SSL context, the handshake,
and the principal from a client certificate.

Certificates: with no ``ssl.keystore.location`` the broker makes, at start, a CA and a server
certificate signed by it (EC P-256, with the `cryptography` library) in a temporary directory
that lives as long as the server: ``ca.pem`` (give it to clients as their CA / truststore),
``server.pem`` + ``server.key``. The server certificate names the bound host, localhost,
127.0.0.1 and ::1. ``TlsMaterial.client_certificate(...)`` issues client certificates from the
same CA for mTLS tests. A user's own keystore (PEM: key and chain in one file, the key maybe
encrypted with ``ssl.key.password``; or PKCS12) and truststore (PEM CA certificates) are used
as given instead.

``ssl.client.auth``: required (no certificate, no connection), requested (verified if sent),
none. The principal of a connection with a verified client certificate is ``User:`` + its
subject DN in RFC 2253 form (``CN=alice,O=acme``), mapped by ``ssl.principal.mapping.rules``
(Kafka's DefaultKafkaPrincipalBuilder and SslPrincipalMapper); without one, User:ANONYMOUS.

A handshake that fails or does not finish within emu.frame.read.timeout.ms closes that
connection (a rate-limited warning), never the listener.
"""

from __future__ import annotations

import datetime
import ipaddress
import logging
import os
import re
import shutil
import ssl
import tempfile
from typing import Any

import trio

log = logging.getLogger("kafka_emu")


def _names():
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    return x509, NameOID


def _key():
    from cryptography.hazmat.primitives.asymmetric import ec
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem_cert(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization
    return cert.public_bytes(serialization.Encoding.PEM)


def _issue(subject, issuer, public_key, signing_key, *, ca: bool, sans=(), client=False):
    x509, _ = _names()
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
               .public_key(public_key).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1))
               .not_valid_after(now + datetime.timedelta(days=825))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
            encipher_only=False, decipher_only=False), critical=True)
    else:
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    return builder.sign(signing_key, hashes.SHA256())


def _dn(text: str):
    """"CN=alice,O=acme" -> an x509.Name (the order given, the first RDN printed last)."""
    x509, oid = _names()
    attrs = {"CN": oid.COMMON_NAME, "O": oid.ORGANIZATION_NAME, "OU": oid.ORGANIZATIONAL_UNIT_NAME,
             "C": oid.COUNTRY_NAME, "L": oid.LOCALITY_NAME, "ST": oid.STATE_OR_PROVINCE_NAME,
             "DC": oid.DOMAIN_COMPONENT, "UID": oid.USER_ID}
    parts = []
    for item in text.split(","):
        key, _, value = item.strip().partition("=")
        parts.append(x509.NameAttribute(attrs[key.strip().upper()], value.strip()))
    return x509.Name(list(reversed(parts)))  # RFC 2253 prints the last RDN first


class TlsSetupError(Exception):
    """The TLS configuration cannot be used (a store that is missing, unreadable, or holds no
    key): one line for the user, raised when the server starts."""


class TlsMaterial:
    """The server's SSL context and, when generated, the CA and its files (``directory``)."""

    def __init__(self, context: ssl.SSLContext, *, ca_file: str | None,
                 cert_file: str | None, key_file: str | None, directory: str | None,
                 ca: Any = None) -> None:
        self.context = context
        self.ca_file, self.cert_file, self.key_file = ca_file, cert_file, key_file
        self.directory = directory  # a temporary directory of ours, removed by ``close``
        self._ca = ca  # (certificate, key) of the generated CA

    @classmethod
    def create(cls, security, hosts) -> "TlsMaterial":
        if security.ssl_keystore_location:
            try:
                return cls._provided(security)
            except (OSError, ValueError, TypeError) as exc:  # ssl.SSLError is an OSError
                raise TlsSetupError(
                    f"cannot use ssl.keystore.location {security.ssl_keystore_location} / "
                    f"ssl.truststore.location {security.ssl_truststore_location}: "
                    f"{getattr(exc, 'strerror', None) or exc}") from exc
        x509, oid = _names()
        directory = tempfile.mkdtemp(prefix="kafka-emu-tls-")
        ca_key = _key()
        ca_name = x509.Name([x509.NameAttribute(oid.COMMON_NAME, "kafka-emu test CA")])
        ca_cert = _issue(ca_name, ca_name, ca_key.public_key(), ca_key, ca=True)
        sans: list = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                      x509.IPAddress(ipaddress.ip_address("::1"))]
        for host in hosts:
            try:
                address = x509.IPAddress(ipaddress.ip_address(host))
            except ValueError:
                address = x509.DNSName(host)
            if host and address not in sans:
                sans.append(address)
        server_key = _key()
        server_name = x509.Name([x509.NameAttribute(oid.COMMON_NAME, "kafka-emu"),
                                 x509.NameAttribute(oid.ORGANIZATION_NAME, "kafka-emu")])
        server_cert = _issue(server_name, ca_name, server_key.public_key(), ca_key, ca=False,
                             sans=sans)
        ca_file = os.path.join(directory, "ca.pem")
        cert_file = os.path.join(directory, "server.pem")
        key_file = os.path.join(directory, "server.key")
        for path, data in ((ca_file, _pem_cert(ca_cert)), (cert_file, _pem_cert(server_cert)),
                           (key_file, _pem_key(server_key))):
            with open(path, "wb") as out:
                out.write(data)
        os.chmod(key_file, 0o600)
        context = _server_context(security, cert_file, key_file, None,
                                  security.ssl_truststore_location or ca_file)
        return cls(context, ca_file=ca_file, cert_file=cert_file, key_file=key_file,
                   directory=directory, ca=(ca_cert, ca_key))

    @classmethod
    def _provided(cls, security) -> "TlsMaterial":
        location = security.ssl_keystore_location
        directory = None
        key_file = None
        if security.ssl_keystore_type == "PKCS12":
            from cryptography.hazmat.primitives.serialization import pkcs12
            with open(location, "rb") as src:
                password = security.ssl_keystore_password or security.ssl_key_password
                key, cert, chain = pkcs12.load_key_and_certificates(
                    src.read(), password.encode() if password else None)
            directory = tempfile.mkdtemp(prefix="kafka-emu-tls-")
            location = os.path.join(directory, "server.pem")
            with open(location, "wb") as out:
                out.write(_pem_key(key) + _pem_cert(cert) + b"".join(map(_pem_cert, chain or ())))
            os.chmod(location, 0o600)
        context = _server_context(security, location, key_file, security.ssl_key_password,
                                  security.ssl_truststore_location)
        return cls(context, ca_file=security.ssl_truststore_location, cert_file=location,
                   key_file=key_file, directory=directory)

    def client_certificate(self, subject: str, directory: str | None = None) -> tuple[str, str]:
        """Issue a client certificate for ``subject`` ("CN=alice,O=acme") from the generated
        CA; returns (certificate file, key file)."""
        if self._ca is None:
            raise RuntimeError("client certificates come from the generated CA only")
        ca_cert, ca_key = self._ca
        key = _key()
        cert = _issue(_dn(subject), ca_cert.subject, key.public_key(), ca_key, ca=False,
                      client=True)
        where = directory or self.directory
        assert where is not None
        stem = re.sub(r"[^A-Za-z0-9]+", "_", subject).strip("_") or "client"
        cert_file, key_file = (os.path.join(where, f"client-{stem}.pem"),
                               os.path.join(where, f"client-{stem}.key"))
        with open(cert_file, "wb") as out:
            out.write(_pem_cert(cert))
        with open(key_file, "wb") as out:
            out.write(_pem_key(key))
        return cert_file, key_file

    def close(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


def _server_context(security, cert_file, key_file, password, ca_file) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file, password)
    mode = security.ssl_client_auth
    if mode != "none":
        if ca_file is None:
            raise ValueError("ssl.client.auth needs ssl.truststore.location with a keystore "
                             "of your own")
        context.load_verify_locations(ca_file)
        context.verify_mode = ssl.CERT_REQUIRED if mode == "required" else ssl.CERT_OPTIONAL
    return context


# -- principal -----------------------------------------------------------------------------
_RULE = re.compile(r"\s*(DEFAULT|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?))\s*(,|$)")


def parse_mapping_rules(text: str) -> list:
    """ssl.principal.mapping.rules as Kafka's SslPrincipalMapper: DEFAULT, or
    RULE:pattern/replacement/[L|U], first match wins."""
    rules, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _RULE.match(text, pos)
        if match is None:
            raise ValueError(f"invalid ssl.principal.mapping.rules: {text!r}")
        if match.group(1) == "DEFAULT":
            rules.append(None)
        else:
            replacement = re.sub(r"\$(\d)", r"\\\1", match.group(4))
            rules.append((re.compile(match.group(2)), replacement, match.group(6)))
        pos = match.end()
    return rules or [None]


def map_principal(dn: str, rules_text: str) -> str:
    for rule in parse_mapping_rules(rules_text):
        if rule is None:
            return dn
        pattern, replacement, case = rule
        if pattern.fullmatch(dn):
            name = pattern.sub(replacement, dn)
            return name.lower() if case == "L" else name.upper() if case == "U" else name
    raise ValueError(f"no ssl.principal.mapping.rules rule matches {dn!r}")


def peer_principal(stream: trio.SSLStream, rules: str) -> str:
    """User:<subject DN, mapped> of a verified client certificate, else User:ANONYMOUS."""
    der = stream.getpeercert(binary_form=True)
    if not der:
        return "User:ANONYMOUS"
    x509, _ = _names()
    dn = x509.load_der_x509_certificate(der).subject.rfc4514_string()
    return "User:" + map_principal(dn, rules)


class TlsSocket:
    """What the connection loop uses of a socket, over a TLS stream: writes go through the
    stream (never the vectored sendmsg path: no ``sendmsg`` here), address lookups and the
    final close to the TCP socket under it."""

    __slots__ = ("stream", "transport")

    def __init__(self, stream: trio.SSLStream) -> None:
        self.stream = stream
        self.transport = stream.transport_stream.socket  # type: ignore[attr-defined]

    async def send(self, data) -> int:
        await self.stream.send_all(data)
        return len(data)

    def getpeername(self):
        return self.transport.getpeername()

    def getsockname(self):
        return self.transport.getsockname()

    def close(self) -> None:
        self.transport.close()


async def serve_tls(broker, stream: trio.SocketStream, node_id, listener) -> None:
    """Handshake, then serve the connection over TLS. Never raises."""
    from ..broker.connection import serve_connection
    from ..broker.log_limits import warn_limited
    from .state import security_of
    security = security_of(broker)
    tls_stream = trio.SSLStream(stream, security.tls.context, server_side=True,
                                https_compatible=True)
    try:
        peer = "%s:%s" % stream.socket.getpeername()[:2]
    except OSError:
        peer = "unknown peer"
    try:
        with trio.fail_after(broker.config.frame_read_timeout_ms / 1000):
            await tls_stream.do_handshake()
        principal = peer_principal(tls_stream, security.config.ssl_principal_mapping_rules)
    except (trio.BrokenResourceError, trio.TooSlowError, OSError, ssl.SSLError,
            ValueError) as exc:
        cause = exc.__cause__ or exc
        warn_limited("tls handshake", "TLS handshake with %s on listener %s failed: %s",
                     peer, listener.name, cause)
        emit = broker.observer
        if emit is not None:  # Kafka counts a failed handshake as a failed authentication
            from ..broker.events import AuthenticationFailed
            emit(AuthenticationFailed(
                at_ms=broker.now_ms(), connection_id=broker.new_connection_id(), peer=peer,
                listener=listener.name, mechanism=None, user=None, reauthentication=False,
                error_code=-1, reason=f"SSL handshake failed: {cause}"))
        with trio.CancelScope(shield=True):
            stream.socket.close()
            await trio.lowlevel.checkpoint()
        return
    await serve_connection(broker, tls_stream, node_id, listener, principal)
