"""Error numbers as the NPU stack prints them: `ret -19`, `err=-22`, `(err=13)`,
`failed with error -2`, `0xffffff92` (a negative errno read back as u32) -> ENODEV, ...

Pure and fixed: the Linux numbers are written here (not taken from the host's `errno`
module) so a log from one machine decodes the same everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Linux asm-generic/errno-base.h and errno.h: the ones amdxdna, the shim and XRT return
NAMES = {
    1: ("EPERM", "Operation not permitted"),
    2: ("ENOENT", "No such file or directory"),
    4: ("EINTR", "Interrupted system call"),
    5: ("EIO", "Input/output error"),
    6: ("ENXIO", "No such device or address"),
    7: ("E2BIG", "Argument list too long"),
    9: ("EBADF", "Bad file descriptor"),
    11: ("EAGAIN", "Resource temporarily unavailable"),
    12: ("ENOMEM", "Cannot allocate memory"),
    13: ("EACCES", "Permission denied"),
    14: ("EFAULT", "Bad address"),
    16: ("EBUSY", "Device or resource busy"),
    17: ("EEXIST", "File exists"),
    19: ("ENODEV", "No such device"),
    22: ("EINVAL", "Invalid argument"),
    24: ("EMFILE", "Too many open files"),
    25: ("ENOTTY", "Inappropriate ioctl for device"),
    28: ("ENOSPC", "No space left on device"),
    34: ("ERANGE", "Numerical result out of range"),
    38: ("ENOSYS", "Function not implemented"),
    61: ("ENODATA", "No data available"),
    62: ("ETIME", "Timer expired"),
    71: ("EPROTO", "Protocol error"),
    74: ("EBADMSG", "Bad message"),
    75: ("EOVERFLOW", "Value too large for defined data type"),
    95: ("EOPNOTSUPP", "Operation not supported"),
    110: ("ETIMEDOUT", "Connection timed out"),
    125: ("ECANCELED", "Operation canceled"),
    # kernel-internal, never returned to userspace: a probe asks to be retried later
    517: ("EPROBE_DEFER", "Driver requests probe retry"),
}
# errnos that say "not yet", not "failed": a line reporting only one of them is no failure
NOT_FAILURES = frozenset({"EPROBE_DEFER"})
_NUMBER_RE = re.compile(
    r"(?:\bret(?:urn)?\s*[=:]?\s*|\berr(?:no)?\s*[=:]?\s*|\bwith error\s+|\berror\s+|"
    r"\bstatus\s+|\b(?:failed|returns?):?\s+|, )(-?\d+)\b"
)
_U32_RE = re.compile(r"\b0x(ffff[0-9a-f]{4})\b", re.IGNORECASE)
# a language runtime's own form: Rust's io::Error ("Os { code: 95, kind: Unsupported, ...
# }"), Python's OSError ("[Errno 13] Permission denied")
_RUNTIME_RE = re.compile(r"\bOs \{ code: (\d+)|\[Errno (\d+)\]")


@dataclass(frozen=True, slots=True)
class Errno:
    number: int  # positive
    name: str
    text: str

    def describe(self) -> str:
        return f"{self.name} ({self.number}: {self.text})"


def decode(line: str) -> Errno | None:
    """The errno a message reports, if it names one this module knows."""
    for match in _NUMBER_RE.finditer(line):
        value = int(match.group(1))
        prefix = match.group(0)
        # ", 0" style numbers and positive "status"/"error" counts are no errno; a
        # positive err=13 is (shim and XRT print errno unsigned)
        if value >= 0 and not prefix.lstrip(", ").startswith("err"):
            continue
        if abs(value) in NAMES:
            return _errno(abs(value))
    for match in _U32_RE.finditer(line):
        value = 0x100000000 - int(match.group(1), 16)
        if value in NAMES:
            return _errno(value)
    if "Os {" in line or "[Errno" in line:
        for match in _RUNTIME_RE.finditer(line):
            value = int(match.group(1) or match.group(2))
            if value in NAMES:
                return _errno(value)
    return None


def _errno(number: int) -> Errno:
    name, text = NAMES[number]
    return Errno(number=number, name=name, text=text)


_TEXTS = {text.lower(): number for number, (_name, text) in NAMES.items()}
_STRERROR_RE = re.compile(r":\s+([A-Z][a-z][\w /-]+?)\.?\s*$")


def from_text(line: str) -> Errno | None:
    """The errno whose strerror text ends a "<what>: <text>" message (perror's form,
    "load_axlf: Operation not supported"), if it is one this module knows."""
    match = _STRERROR_RE.search(line[-120:])  # the end of the line, whatever its length
    number = _TEXTS.get(match.group(1).lower()) if match else None
    return _errno(number) if number is not None else None


def reported(line: str) -> Errno | None:
    """The errno a line reports in any form this module reads: a number (`decode`) or, failing
    that, the strerror text that ends it (`from_text`)."""
    return decode(line) or from_text(line)
