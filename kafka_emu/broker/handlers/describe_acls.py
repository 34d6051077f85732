"""DescribeAcls v1-3 (Kafka 4.0 removed v0): v1 pattern types; v2 flexible; v3 USER resources.
Needs DESCRIBE on the cluster (security/authorize_table.py). With no authorizer configured,
SECURITY_DISABLED, as Kafka's AclApis. A filter with an UNKNOWN (0) element does not parse on
Kafka (DescribeAclsRequest.normalizeAndValidate): the connection is closed."""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.errors import DecodeError
from ...protocol.messages.describe_acls import (API, AclDescription, DescribeAclsResource,
                                                DescribeAclsResponse)
from ...security.acls import AclFilter
from . import Handler


def has_unknown(f) -> bool:
    return 0 in (f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type)


def as_filter(f) -> AclFilter:
    """A DescribeAcls request or a DeleteAcls filter as an AclFilter (same field names)."""
    return AclFilter(resource_type=f.resource_type_filter, resource_name=f.resource_name_filter,
                     pattern_type=f.pattern_type_filter, principal=f.principal_filter,
                     host=f.host_filter, operation=f.operation, permission=f.permission_type)


async def describe_acls(ctx, request) -> DescribeAclsResponse:
    if has_unknown(request):
        raise DecodeError("DescribeAclsRequest contains UNKNOWN elements")
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return DescribeAclsResponse(error_code=ErrorCode.SECURITY_DISABLED,
                                    error_message="No Authorizer is configured on the broker")
    # one resource per pattern, its ACLs under it (DescribeAclsResponse.aclsResources)
    resources: dict[tuple[int, str, int], list] = {}
    for b in authorizer.describe(as_filter(request)):
        resources.setdefault((b.resource_type, b.resource_name, b.pattern_type), []).append(
            AclDescription(principal=b.principal, host=b.host, operation=b.operation,
                           permission_type=b.permission))
    return DescribeAclsResponse(error_code=ErrorCode.NONE, resources=[
        DescribeAclsResource(resource_type=t, resource_name=n, pattern_type=p, acls=acls)
        for (t, n, p), acls in resources.items()])


HANDLER = Handler(API, "1-3", describe_acls)
