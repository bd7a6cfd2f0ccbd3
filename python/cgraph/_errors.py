"""Exception classes: one per cgraph_status code, each also a fitting builtin."""

from __future__ import annotations


class Error(Exception):
    """Base of every cgraph failure.

    Attributes:
        code: the C API status code (``cgraph_status``: 1 invalid, 2 out of memory,
            3 device lost, 4 unsupported, 5 io, 6 timeout, 7 internal).
        message: the library's one-line message (also ``str(error)``).
    """

    code: int = 7

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class InvalidError(Error, ValueError):
    """Bad input: a malformed graph, a wrong argument, binding or parameter value."""

    code = 1


class OutOfMemoryError(Error, MemoryError):
    """A host or device allocation failed."""

    code = 2


class DeviceLostError(Error, RuntimeError):
    """The device or its driver failed."""

    code = 3


class UnsupportedError(Error, RuntimeError):
    """Valid, but this device or build cannot do it."""

    code = 4


class IoError(Error, OSError):
    """A file operation failed (the message names the file and the system error)."""

    code = 5


class WaitTimeoutError(Error, TimeoutError):
    """A wait ran past its limit."""

    code = 6


class InternalError(Error, RuntimeError):
    """A broken invariant inside cgraph."""

    code = 7


_BY_CODE = {
    cls.code: cls
    for cls in (InvalidError, OutOfMemoryError, DeviceLostError, UnsupportedError, IoError,
                WaitTimeoutError, InternalError)
}


def error_for(code: int, message: str) -> Error:
    """The exception for C API status `code` (InternalError for an unknown code)."""
    cls = _BY_CODE.get(code, InternalError)
    return cls(message, code if code in _BY_CODE else InternalError.code)
