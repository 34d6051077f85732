"""DescribeUserScramCredentials (50): valid 0, flexible 0+ (KIP-554)."""

from ..schema import INT8, INT16, INT32, STRING, Api, Array, field, message, struct


@struct
class UserName:
    name: str = field(STRING, "0+")


@message(api_key=50, kind="request", valid="0", flexible="0+")
class DescribeUserScramCredentialsRequest:
    users: list | None = field(Array(UserName), "0+", nullable="0+", default=None)


@struct
class CredentialInfo:
    mechanism: int = field(INT8, "0+")
    iterations: int = field(INT32, "0+")


@struct
class DescribeUserScramCredentialsResult:
    user: str = field(STRING, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    credential_infos: list = field(Array(CredentialInfo), "0+")


@message(api_key=50, kind="response", valid="0", flexible="0+")
class DescribeUserScramCredentialsResponse:
    throttle_time_ms: int = field(INT32, "0+")
    error_code: int = field(INT16, "0+")
    error_message: str | None = field(STRING, "0+", nullable="0+", default=None)
    results: list = field(Array(DescribeUserScramCredentialsResult), "0+")


API = Api(50, "DescribeUserScramCredentials", DescribeUserScramCredentialsRequest,
          DescribeUserScramCredentialsResponse)
