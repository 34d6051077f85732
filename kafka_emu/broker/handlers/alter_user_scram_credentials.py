"""AlterUserScramCredentials v0 (KIP-554): upsert or delete SCRAM credentials, one result per
user. The client sends (salt, iterations, salted password); the broker keeps the derived
stored and server keys. Per user, as Kafka's controller checks: an unknown mechanism
UNSUPPORTED_SASL_MECHANISM; an empty name or iterations outside [4096, 16384]
UNACCEPTABLE_CREDENTIAL; the same (user, mechanism) twice DUPLICATE_RESOURCE; deleting a
credential that does not exist RESOURCE_NOT_FOUND. A user's changes apply only if all of
them pass."""

from __future__ import annotations

from collections import Counter

from ...errors import ErrorCode
from ...protocol.messages.alter_user_scram_credentials import (
    API, AlterUserScramCredentialsResponse, AlterUserScramCredentialsResult)
from ...security.scram import (MAX_ITERATIONS, MECHANISM_CODES, MIN_ITERATIONS,
                               credential_from_salted)
from ...security.state import security_of
from . import Handler

MECHANISMS = {code: name for name, code in MECHANISM_CODES.items()}


def _check(scram, item, deletion: bool, pairs: Counter) -> tuple[ErrorCode, str] | None:
    mechanism = MECHANISMS.get(item.mechanism)
    if mechanism is None:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    if not item.name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if pairs[(item.name, item.mechanism)] > 1:
        return (ErrorCode.DUPLICATE_RESOURCE,
                "A user credential cannot be altered twice in the same request")
    if deletion:
        if item.name not in scram[mechanism]:
            return (ErrorCode.RESOURCE_NOT_FOUND,
                    "Attempt to delete a user credential that does not exist")
    elif not MIN_ITERATIONS <= item.iterations <= MAX_ITERATIONS:
        return (ErrorCode.UNACCEPTABLE_CREDENTIAL,
                f"Iterations must be between {MIN_ITERATIONS} and {MAX_ITERATIONS}"
                if item.iterations >= MIN_ITERATIONS else
                f"Too few iterations: {item.iterations}, minimum {MIN_ITERATIONS}")
    return None


async def alter_user_scram_credentials(ctx, request) -> AlterUserScramCredentialsResponse:
    scram = security_of(ctx.broker).credentials.scram
    pairs = Counter((i.name, i.mechanism) for i in [*request.deletions, *request.upsertions])
    failed: dict[str, tuple[ErrorCode, str]] = {}
    order: dict[str, None] = {}
    for deletion, items in ((True, request.deletions), (False, request.upsertions)):
        for item in items:
            order[item.name] = None
            problem = _check(scram, item, deletion, pairs)
            if problem is not None and item.name not in failed:
                failed[item.name] = problem
    for item in request.deletions:
        if item.name not in failed:
            scram[MECHANISMS[item.mechanism]].pop(item.name, None)
    for item in request.upsertions:
        if item.name not in failed:
            mechanism = MECHANISMS[item.mechanism]
            scram[mechanism][item.name] = credential_from_salted(
                mechanism, item.salt, item.salted_password, item.iterations)
    results = []
    for name in order:
        code, message = failed.get(name, (ErrorCode.NONE, None))
        results.append(AlterUserScramCredentialsResult(user=name, error_code=code,
                                                       error_message=message))
    return AlterUserScramCredentialsResponse(results=results)


HANDLER = Handler(API, "0", alter_user_scram_credentials)
