"""AlterUserScramCredentials (51): valid 0, flexible 0+ (KIP-554). The client salts the
password; the broker keeps (salt, iterations, salted password) as a SCRAM credential."""

from ..schema import BYTES, INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class ScramCredentialDeletion:
    name: str = field(STRING, "0+")
    mechanism: int = field(INT8, "0+")


@struct
class ScramCredentialUpsertion:
    name: str = field(STRING, "0+")
    mechanism: int = field(INT8, "0+")
    iterations: int = field(INT32, "0+")
    salt: bytes = field(BYTES, "0+")
    salted_password: bytes = field(BYTES, "0+")


@message(api_key=51, kind="request", valid="0", flexible="0+")
class AlterUserScramCredentialsRequest:
    deletions: list = field(Array(ScramCredentialDeletion), "0+")
    upsertions: list = field(Array(ScramCredentialUpsertion), "0+")


@struct
class AlterUserScramCredentialsResult:
    user: str = field(STRING, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)


@message(api_key=51, kind="response", valid="0", flexible="0+")
class AlterUserScramCredentialsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    results: list = field(Array(AlterUserScramCredentialsResult), "0+")


API = Api(51, "AlterUserScramCredentials", AlterUserScramCredentialsRequest,
          AlterUserScramCredentialsResponse)
