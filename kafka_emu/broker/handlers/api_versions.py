"""ApiVersions v0-4: v3+ carries the client software name/version (KIP-511), validated
against Kafka's pattern (INVALID_REQUEST otherwise). The advertised ranges come from the
handler table and the declarations, capped by ``emu.api.max.versions``, with one quirk of Kafka
4.x kept: Produce is listed from v0 although v0-2 are refused (``lists_produce_from_zero``). A
version we do not know is answered by the frame's dispatch in v0 with UNSUPPORTED_VERSION (see
dispatch.py).
"""

from __future__ import annotations

import re

from ...errors import ErrorCode
from ...protocol.messages.api_versions import (API, ApiVersion, ApiVersionsResponse,
                                                FinalizedFeatureKey, SupportedFeatureKey)
from ...protocol.registry import KEY_OF
from . import Handler

_PRODUCE = KEY_OF["Produce"]  # by name from the index: its declarations load only if used
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def carries_client_software(version: int) -> bool:
    return version >= 3


def lists_produce_from_zero(api_key: int) -> bool:
    """Kafka 4.x removed Produce v0-2 (KIP-896) but still lists Produce from v0 in ApiVersions,
    because librdkafka releases derive message-format support from those versions being listed
    (KAFKA-18659, ``ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION``). A v0-2 request is
    still refused: the connection loop checks ``broker.advertised``, which starts at v3."""
    return api_key == _PRODUCE


def _api_keys(broker) -> list[ApiVersion]:
    return [ApiVersion(api_key=key, min_version=0 if lists_produce_from_zero(key) else v.lo,
                       max_version=v.hi)
            for key, v in broker.advertised.items()]


# Feature name -> (min, max) level this broker supports, as Kafka 4.2 lists them (v3+). Only the
# features kafka-emu's behaviour follows are listed.
SUPPORTED_FEATURES = {"share.version": (0, 1), "transaction.version": (0, 2)}


def finalized_features(broker) -> dict[str, int]:
    """Feature name -> finalized level, as on a newly formatted Kafka 4.x cluster: share.version 1
    (ShareVersion.LATEST_PRODUCTION, emu.share.version) and transaction.version 2
    (TransactionVersion.LATEST_PRODUCTION, emu.transaction.version); a feature at level 0 is
    not listed. Kafka does not cap Produce/EndTxn/TxnOffsetCommit by transaction.version: a
    client caps itself (Java's isTransactionV2Enabled) and the request version picks the path."""
    levels = {"share.version": 1 if broker.config.coordinator.share.enabled else 0,
              "transaction.version": broker.config.transaction_version}
    return {name: level for name, level in levels.items() if level}


def _features(broker) -> dict:
    finalized = finalized_features(broker)
    return dict(
        supported_features=[SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
                            for n, (lo, hi) in SUPPORTED_FEATURES.items()],
        finalized_features_epoch=0 if finalized else -1,
        finalized_features=[FinalizedFeatureKey(name=n, max_version_level=v, min_version_level=v)
                            for n, v in finalized.items()])


def unsupported_version_response(broker) -> ApiVersionsResponse:
    own = broker.advertised[API.key]
    return ApiVersionsResponse(
        error_code=ErrorCode.UNSUPPORTED_VERSION,
        api_keys=[ApiVersion(api_key=API.key, min_version=own.lo, max_version=own.hi)])


async def api_versions(ctx, request) -> ApiVersionsResponse:
    if carries_client_software(ctx.version):
        name, version = request.client_software_name, request.client_software_version
        if not (_SOFTWARE.fullmatch(name) and _SOFTWARE.fullmatch(version)):
            return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST)
        ctx.connection.client_software_name = name
        ctx.connection.client_software_version = version
        ctx.connection.trace_identity = None  # (made again with them: dispatch.py)
    return ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=_api_keys(ctx.broker),
                               **_features(ctx.broker))


HANDLER = Handler(API, "0-4", api_versions)
