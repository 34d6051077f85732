"""DescribeConfigs (32): valid 0-4, flexible 4+ (v0 deprecated; Kafka 4.0 removed it).

v1 IncludeSynonyms, per-config ConfigSource and Synonyms (v0 has IsDefault instead); v2 same
as v1 (responses before throttling); v3 IncludeDocumentation, ConfigType and Documentation
(KIP-569); v4 flexible.
"""

from ..schema import BOOL, INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class DescribeConfigsResource:
    resource_type: int = field(INT8, "0+")
    resource_name: str = field(STRING, "0+")
    configuration_keys: list | None = field(Array(STRING), "0+", nullable="0+", default=None)


@message(api_key=32, kind="request", valid="0-4", flexible="4+")
class DescribeConfigsRequest:
    resources: list = field(Array(DescribeConfigsResource), "0+")
    include_synonyms: bool = field(BOOL, "1+")
    include_documentation: bool = field(BOOL, "3+")


@struct
class DescribeConfigsSynonym:
    name: str = field(STRING, "1+")
    value: str | None = field(STRING, "1+", nullable="0+")
    source: int = field(INT8, "1+")


@struct
class DescribeConfigsResourceResult:
    name: str = field(STRING, "0+")
    value: str | None = field(STRING, "0+", nullable="0+")
    read_only: bool = field(BOOL, "0+")
    is_default: bool = field(BOOL, "0")
    config_source: int = field(INT8, "1+", default=-1, ignorable=True)
    is_sensitive: bool = field(BOOL, "0+")
    synonyms: list = field(Array(DescribeConfigsSynonym), "1+", ignorable=True)
    config_type: int = field(INT8, "3+", ignorable=True)
    documentation: str | None = field(STRING, "3+", nullable="0+", default=None,
                                      ignorable=True)


@struct
class DescribeConfigsResult:
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    resource_type: int = field(INT8, "0+")
    resource_name: str = field(STRING, "0+")
    configs: list = field(Array(DescribeConfigsResourceResult), "0+")


@message(api_key=32, kind="response", valid="0-4", flexible="4+")
class DescribeConfigsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    results: list = field(Array(DescribeConfigsResult), "0+")


API = Api(32, "DescribeConfigs", DescribeConfigsRequest, DescribeConfigsResponse)
