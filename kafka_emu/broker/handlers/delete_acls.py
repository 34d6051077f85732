"""DeleteAcls v1-3 (Kafka 4.0 removed v0): v1 pattern types; v2 flexible; v3 USER resources.
Needs ALTER on the cluster (security/authorize_table.py). One result per filter, in request
order, listing the ACLs it deleted (an ACL two filters match is listed under the first only,
being gone for the second). With no authorizer configured, every filter is SECURITY_DISABLED.
A filter with an UNKNOWN (0) element does not parse on Kafka
(DeleteAclsRequest.normalizeAndValidate): the connection is closed."""

from __future__ import annotations

from ...errors import ErrorCode
from ...protocol.errors import DecodeError
from ...protocol.messages.delete_acls import (API, DeleteAclsFilterResult, DeleteAclsMatchingAcl,
                                              DeleteAclsResponse)
from . import Handler
from .describe_acls import as_filter, has_unknown


async def delete_acls(ctx, request) -> DeleteAclsResponse:
    if any(has_unknown(f) for f in request.filters):
        raise DecodeError("Filters contain UNKNOWN elements")
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return DeleteAclsResponse(filter_results=[
            DeleteAclsFilterResult(error_code=ErrorCode.SECURITY_DISABLED,
                                   error_message="No Authorizer is configured.")
            for _ in request.filters])
    results = []
    for f in request.filters:
        gone = authorizer.delete(as_filter(f))
        results.append(DeleteAclsFilterResult(error_code=ErrorCode.NONE, matching_acls=[
            DeleteAclsMatchingAcl(error_code=ErrorCode.NONE, resource_type=b.resource_type,
                                  resource_name=b.resource_name, pattern_type=b.pattern_type,
                                  principal=b.principal, host=b.host, operation=b.operation,
                                  permission_type=b.permission) for b in gone]))
    return DeleteAclsResponse(filter_results=results)


HANDLER = Handler(API, "1-3", delete_acls)
