"""The wire protocol, pure: declarations, one codec, headers and framing. No trio, no sockets."""

from .codec import decode, encode
from .errors import DecodeError, EncodeError
from .framing import FrameBuffer, FrameTooLarge
from .registry import APIS, BY_NAME

__all__ = ["APIS", "BY_NAME", "DecodeError", "EncodeError", "FrameBuffer", "FrameTooLarge",
           "decode", "encode"]
