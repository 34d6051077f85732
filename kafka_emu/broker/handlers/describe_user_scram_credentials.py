"""DescribeUserScramCredentials v0 (KIP-554): the SCRAM credentials the broker holds, by user --
mechanism and iterations, never the salt or keys. Null or empty users: every user with a
credential. A user named twice: DUPLICATE_RESOURCE; a user without one: RESOURCE_NOT_FOUND
(Kafka's messages)."""

from __future__ import annotations

from collections import Counter

from ...errors import ErrorCode
from ...protocol.messages.describe_user_scram_credentials import (
    API, CredentialInfo, DescribeUserScramCredentialsResponse, DescribeUserScramCredentialsResult)
from ...security.scram import MECHANISM_CODES
from ...security.state import security_of
from . import Handler


async def describe_user_scram_credentials(ctx, request) -> DescribeUserScramCredentialsResponse:
    scram = security_of(ctx.broker).credentials.scram

    def infos(user: str) -> list:
        return [CredentialInfo(mechanism=MECHANISM_CODES[m], iterations=creds[user].iterations)
                for m, creds in scram.items() if user in creds]

    results = []
    if not request.users:
        for user in sorted({u for creds in scram.values() for u in creds}):
            results.append(DescribeUserScramCredentialsResult(
                user=user, error_code=ErrorCode.NONE, credential_infos=infos(user)))
    else:
        counts = Counter(u.name for u in request.users)
        for name in dict.fromkeys(u.name for u in request.users):
            if counts[name] > 1:
                results.append(DescribeUserScramCredentialsResult(
                    user=name, error_code=ErrorCode.DUPLICATE_RESOURCE,
                    error_message=f"Cannot describe SCRAM credentials for the same user twice "
                                  f"in a single request: {name}", credential_infos=[]))
                continue
            found = infos(name)
            if not found:
                results.append(DescribeUserScramCredentialsResult(
                    user=name, error_code=ErrorCode.RESOURCE_NOT_FOUND,
                    error_message=f"Attempt to describe a user credential that does not "
                                  f"exist: {name}", credential_infos=[]))
                continue
            results.append(DescribeUserScramCredentialsResult(
                user=name, error_code=ErrorCode.NONE, credential_infos=found))
    return DescribeUserScramCredentialsResponse(error_code=ErrorCode.NONE, results=results)


HANDLER = Handler(API, "0", describe_user_scram_credentials)
