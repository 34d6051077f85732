"""CreateAcls v1-3 (Kafka 4.0 removed v0): v1 pattern types; v2 flexible; v3 USER resources.
Needs ALTER on the cluster (security/authorize_table.py). One result per creation, in request
order: INVALID_REQUEST with Kafka's message for a binding Kafka refuses (security/acls.py's
``invalid_reason``), the rest created. With no authorizer configured, every result is
SECURITY_DISABLED. A creation with an UNKNOWN (0) element does not parse on Kafka
(CreateAclsRequest.validate): the connection is closed."""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.errors import DecodeError
from ...protocol.messages.create_acls import API, AclCreationResult, CreateAclsResponse
from ...security.acls import AclBinding
from . import Handler


async def create_acls(ctx, request) -> CreateAclsResponse:
    creations = request.creations
    if any(0 in (c.resource_pattern_type, c.resource_type, c.permission_type, c.operation)
           for c in creations):
        raise DecodeError("CreatableAcls contain unknown elements")
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return CreateAclsResponse(results=[
            AclCreationResult(error_code=ErrorCode.SECURITY_DISABLED,
                              error_message="No Authorizer is configured.") for _ in creations])
    reasons = authorizer.create(
        AclBinding(resource_type=c.resource_type, resource_name=c.resource_name,
                   pattern_type=c.resource_pattern_type, principal=c.principal, host=c.host,
                   operation=c.operation, permission=c.permission_type) for c in creations)
    return CreateAclsResponse(results=[
        AclCreationResult(error_code=ErrorCode.NONE) if reason is None else
        AclCreationResult(error_code=ErrorCode.INVALID_REQUEST, error_message=reason)
        for reason in reasons])


HANDLER = Handler(API, "1-3", create_acls)
