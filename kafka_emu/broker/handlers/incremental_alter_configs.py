"""IncrementalAlterConfigs v0-1 (v1 flexible, KIP-339): SET, DELETE, and APPEND / SUBTRACT for
list-typed configs, applied on top of the resource's current overrides; the result is
validated as a whole before anything changes.
"""

from __future__ import annotations

from ...protocol.messages.incremental_alter_configs import (
    API, IncrementalAlterConfigsResourceResponse, IncrementalAlterConfigsResponse)
from . import Handler
from .alter_configs import resource_results


async def incremental_alter_configs(ctx, request) -> IncrementalAlterConfigsResponse:
    configs = ctx.broker.resource_configs

    def overrides(r):
        return configs.incremental(r.resource_type, r.resource_name,
                                   [(c.name, c.config_operation, c.value) for c in r.configs])
    return IncrementalAlterConfigsResponse(responses=resource_results(
        ctx, request.resources, overrides, request.validate_only,
        IncrementalAlterConfigsResourceResponse))


HANDLER = Handler(API, "0-1", incremental_alter_configs)
