"""DescribeConfigs v1-4 (Kafka 4.0 removed v0): v1 synonyms and ConfigSource; v3 ConfigType and
Documentation; v4 flexible. Topics, this broker and groups (``broker/resource_configs.py``).
Synonyms are listed only when asked for (IncludeSynonyms), documentation is left null.
"""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.describe_configs import (API, DescribeConfigsResourceResult,
                                                   DescribeConfigsResponse,
                                                   DescribeConfigsResult,
                                                   DescribeConfigsSynonym)
from . import Handler


def has_is_default(version: int) -> bool:
    return version == 0  # v1+ says it with ConfigSource


def _config(entry, include_synonyms: bool, version: int) -> DescribeConfigsResourceResult:
    return DescribeConfigsResourceResult(
        name=entry.name, value=entry.value, read_only=entry.read_only,
        is_default=entry.is_default and has_is_default(version), config_source=entry.source, is_sensitive=entry.sensitive,
        synonyms=[DescribeConfigsSynonym(name=s.name, value=s.value, source=s.source)
                  for s in entry.synonyms] if include_synonyms else [],
        config_type=entry.type)


async def describe_configs(ctx, request) -> DescribeConfigsResponse:
    configs = ctx.broker.resource_configs
    results = []
    for r in request.resources:
        try:
            entries = configs.describe(r.resource_type, r.resource_name, r.configuration_keys)
        except KafkaError as exc:
            results.append(DescribeConfigsResult(
                error_code=exc.code, error_message=exc.message or None,
                resource_type=r.resource_type, resource_name=r.resource_name))
            continue
        results.append(DescribeConfigsResult(
            error_code=ErrorCode.NONE, resource_type=r.resource_type,
            resource_name=r.resource_name,
            configs=[_config(e, request.include_synonyms, ctx.version) for e in entries]))
    return DescribeConfigsResponse(results=results)


HANDLER = Handler(API, "1-4", describe_configs)
