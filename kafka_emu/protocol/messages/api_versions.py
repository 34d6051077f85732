"""ApiVersions (18): valid 0-4, flexible 3+ (responses always use response header v0).

v1 throttle; v3 flexible, client software name/version and tagged feature fields (KIP-511);
v4 lists features with MinVersion 0 too. Wire order: ErrorCode, ApiKeys, ThrottleTimeMs.
"""

from ..schema import BOOL, INT16, INT32, INT64, STRING, Api, Array, field, message, struct


@message(api_key=18, kind="request", valid="0-4", flexible="3+")
class ApiVersionsRequest:
    client_software_name: str = field(STRING, "3+", ignorable=True)
    client_software_version: str = field(STRING, "3+", ignorable=True)


@struct
class ApiVersion:
    api_key: int = field(INT16, "0+")
    min_version: int = field(INT16, "0+")
    max_version: int = field(INT16, "0+")


@struct
class SupportedFeatureKey:
    name: str = field(STRING, "3+")
    min_version: int = field(INT16, "3+")
    max_version: int = field(INT16, "3+")


@struct
class FinalizedFeatureKey:
    name: str = field(STRING, "3+")
    max_version_level: int = field(INT16, "3+")  # Max before Min, as on the wire
    min_version_level: int = field(INT16, "3+")


@message(api_key=18, kind="response", valid="0-4", flexible="3+")
class ApiVersionsResponse:
    error_code: int = field(INT16, "0+")
    api_keys: list = field(Array(ApiVersion), "0+")
    throttle_time_ms: int = field(INT32, "1+", ignorable=True)
    supported_features: list = field(Array(SupportedFeatureKey), "3+", ignorable=True,
                                     tag=0, tagged="3+")
    finalized_features_epoch: int = field(INT64, "3+", default=-1, ignorable=True,
                                          tag=1, tagged="3+")
    finalized_features: list = field(Array(FinalizedFeatureKey), "3+", ignorable=True,
                                     tag=2, tagged="3+")
    zk_migration_ready: bool = field(BOOL, "3+", ignorable=True, tag=3, tagged="3+")


API = Api(18, "ApiVersions", ApiVersionsRequest, ApiVersionsResponse)
