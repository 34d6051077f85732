"""AlterConfigs v0-2 (v2 flexible): each resource's overrides are replaced by the ones given
(configs not named go back to their defaults), validated as a whole first, so a refused
resource changes nothing. A resource named twice is INVALID_REQUEST (KafkaApis).
"""

from __future__ import annotations

from collections import Counter

from ...errors import ErrorCode, KafkaError
from ...protocol.messages.alter_configs import (API, AlterConfigsResourceResponse,
                                                AlterConfigsResponse)
from . import Handler


def resource_results(ctx, resources, new_overrides, validate_only: bool, make_result) -> list:
    """Shared by AlterConfigs and IncrementalAlterConfigs: apply ``new_overrides(resource)``
    (the resource's complete overrides afterwards) per resource, errors per resource."""
    configs = ctx.broker.resource_configs
    counts = Counter((r.resource_type, r.resource_name) for r in resources)
    results = []
    for r in resources:
        try:
            if counts[(r.resource_type, r.resource_name)] > 1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate resource "
                                 f"{r.resource_name} of type {r.resource_type}")
            configs.replace(r.resource_type, r.resource_name, new_overrides(r), validate_only)
        except KafkaError as exc:
            results.append(make_result(error_code=exc.code, error_message=exc.message or None,
                                       resource_type=r.resource_type,
                                       resource_name=r.resource_name))
            continue
        results.append(make_result(error_code=ErrorCode.NONE, resource_type=r.resource_type,
                                   resource_name=r.resource_name))
    return results


async def alter_configs(ctx, request) -> AlterConfigsResponse:
    def overrides(r):
        ctx.broker.resource_configs.current_overrides(r.resource_type, r.resource_name)
        return {c.name: c.value for c in r.configs}
    return AlterConfigsResponse(responses=resource_results(
        ctx, request.resources, overrides, request.validate_only, AlterConfigsResourceResponse))


HANDLER = Handler(API, "0-2", alter_configs)
