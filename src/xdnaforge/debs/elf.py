"""ELF run paths: the DT_RPATH and DT_RUNPATH entries of an executable or shared library. Pure.

pyelftools reads the dynamic section through the PT_DYNAMIC segment and resolves the string
table by address, so stripped files (no section headers), 32/64-bit and both byte orders work;
a parser of our own would have to redo exactly that. This module only parses bytes it is given.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

HEAD = 20  # e_ident and e_type: enough to tell a dynamic ELF file
_DYNAMIC_TYPES = (2, 3)  # ET_EXEC, ET_DYN; ET_REL (a .o or a kernel module) has no run path
# what pyelftools raises on a damaged file besides its own ELFError (its parser is generic)
_DAMAGED = (
    struct.error,
    ValueError,
    IndexError,
    KeyError,
    AssertionError,
    TypeError,
    OverflowError,
)


@dataclass(frozen=True, slots=True)
class RunPath:
    tag: str  # RPATH or RUNPATH
    value: str  # as stored: entries separated by ":"


def is_dynamic(head: bytes) -> bool:
    """An ELF executable or shared library, from the file's first HEAD bytes."""
    if len(head) < HEAD or head[:4] != b"\x7fELF" or head[5] not in (1, 2):
        return False
    order = "<" if head[5] == 1 else ">"
    return struct.unpack(f"{order}H", head[16:18])[0] in _DYNAMIC_TYPES


def run_paths(data: bytes) -> tuple[tuple[RunPath, ...], str | None]:
    """The file's run paths, and why they could not be read (a damaged file), if so."""
    # imported here: pyelftools takes a third of the reader's import time, and most packages
    # an audit reads (a kernel image's modules, data files) hold no executable at all
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSegment
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(io.BytesIO(data))
        found = []
        for segment in elf.iter_segments():
            if not isinstance(segment, DynamicSegment):
                continue
            for tag in segment.iter_tags():
                name = str(tag.entry.d_tag)[3:]
                if name in ("RPATH", "RUNPATH"):
                    # pyelftools resolves the string into an attribute named after the tag
                    found.append(RunPath(tag=name, value=str(getattr(tag, name.lower()))))
        return tuple(found), None
    except (ELFError, *_DAMAGED) as error:
        return (), f"cannot read its dynamic section: {str(error) or type(error).__name__}"
