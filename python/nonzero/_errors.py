"""_errors.py: the NonzeroError hierarchy, one class per status range of nonzero.h."""


class NonzeroError(Exception):
    """A Nonzero call failed. .status is the nz_status_t code, .message the library's line."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status
        self.message = message


class InvalidArgumentError(NonzeroError, ValueError):
    """-1 .. -19: a NULL, out-of-range or foreign argument."""


class DimensionMismatchError(InvalidArgumentError):
    """-4: operand shapes do not agree."""


class WrongLocationError(InvalidArgumentError):
    """-5: a host object where a device one is needed, or the reverse."""


class InvalidMatrixError(NonzeroError, ValueError):
    """-20 .. -39: inconsistent structure (offsets, indices)."""


class NotSortedError(InvalidMatrixError):
    """-21: unsorted or duplicate column indices where they must be canonical."""


class UnsupportedError(NonzeroError, NotImplementedError):
    """-40 .. -59: combination not implemented, or too large."""


class NoDeviceError(UnsupportedError):
    """-42: no CUDA device, or the library was built without CUDA."""


class OutOfMemoryError(NonzeroError, MemoryError):
    """-60, -61: host or device allocation failed."""


class NonzeroOverflowError(NonzeroError, OverflowError):
    """-62: a size computation would overflow."""


class DeviceError(NonzeroError, RuntimeError):
    """-80 .. -99: a CUDA call or kernel launch failed."""


class NonzeroIOError(NonzeroError, OSError):
    """-100: cannot open, read or write a file."""

    def __str__(self):
        return self.message


class ParseError(NonzeroError, ValueError):
    """-101: malformed file (the message names the line)."""


class BreakdownError(NonzeroError, ArithmeticError):
    """-120 .. -139: solver breakdown (A not SPD)."""


def error_class(status):
    exact = {-4: DimensionMismatchError, -5: WrongLocationError, -21: NotSortedError,
             -42: NoDeviceError, -62: NonzeroOverflowError, -100: NonzeroIOError,
             -101: ParseError}
    if status in exact:
        return exact[status]
    if -19 <= status <= -1:
        return InvalidArgumentError
    if -39 <= status <= -20:
        return InvalidMatrixError
    if -59 <= status <= -40:
        return UnsupportedError
    if -79 <= status <= -60:
        return OutOfMemoryError
    if -99 <= status <= -80:
        return DeviceError
    if -119 <= status <= -100:
        return NonzeroIOError
    if -139 <= status <= -120:
        return BreakdownError
    return NonzeroError
