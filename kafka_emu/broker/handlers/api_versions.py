"""ApiVersions v0-4: v3+ carries the client software name/version (KIP-511), validated
against Kafka's pattern (INVALID_REQUEST otherwise). The advertised ranges come from the
handler table and the declarations, capped by ``emu.api.max.versions``. A version we do not
know is answered by the connection loop in v0 with UNSUPPORTED_VERSION (see connection.py).
"""

from __future__ import annotations

import re

from ...errors import ErrorCode
from ...protocol.messages.api_versions import API, ApiVersion, ApiVersionsResponse
from . import Handler

_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def carries_client_software(version: int) -> bool:
    return version >= 3


def _api_keys(broker) -> list[ApiVersion]:
    return [ApiVersion(api_key=key, min_version=v.lo, max_version=v.hi)
            for key, v in broker.advertised.items()]


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
    return ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=_api_keys(ctx.broker))


HANDLER = Handler(API, "0-4", api_versions)
