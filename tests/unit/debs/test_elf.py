"""ELF run paths: read from the dynamic segment, any class and byte order; damage is reported."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.debs import elf_bytes
from xdnaforge.debs.elf import HEAD, RunPath, is_dynamic, run_paths


@pytest.mark.parametrize(("bits", "little"), [(64, True), (32, True), (64, False), (32, False)])
@pytest.mark.parametrize("tag", ["RPATH", "RUNPATH"])
def test_run_paths_of_every_class_and_byte_order(bits: int, little: bool, tag: str) -> None:
    data = elf_bytes("/home/dev/xrt/build/lib:$ORIGIN/../lib", tag, bits, little)
    assert is_dynamic(data[:HEAD])
    assert run_paths(data) == (
        (RunPath(tag=tag, value="/home/dev/xrt/build/lib:$ORIGIN/../lib"),),
        None,
    )


def test_a_library_without_run_path_has_none() -> None:
    assert run_paths(elf_bytes(None)) == ((), None)


def test_only_executables_and_shared_libraries_are_dynamic() -> None:
    relocatable = bytearray(elf_bytes("/tmp"))
    relocatable[16] = 1  # ET_REL: an object file or a kernel module, never loaded with a run path
    assert not is_dynamic(bytes(relocatable[:HEAD]))
    assert not is_dynamic(b"\x7fELF core")
    assert not is_dynamic(b"#!/bin/sh\nexec xrt-smi\n")


def test_a_damaged_dynamic_segment_is_reported_not_raised() -> None:
    data = elf_bytes("/opt/xilinx/xrt/lib")
    found, problem = run_paths(data[:150])
    assert found == ()
    assert problem is not None
    assert problem.startswith("cannot read its dynamic section")


@settings(max_examples=300, deadline=None)
@given(
    cuts=st.lists(st.tuples(st.integers(0, 250), st.binary(min_size=1, max_size=8)), max_size=4),
    truncate=st.integers(0, 260),
)
def test_fuzzed_elf_files_never_raise(cuts: list[tuple[int, bytes]], truncate: int) -> None:
    data = bytearray(elf_bytes("/opt/xilinx/xrt/lib"))
    for offset, replacement in cuts:
        data[offset : offset + len(replacement)] = replacement
    _, problem = run_paths(bytes(data[:truncate]))  # raising anything fails the test
    assert problem is None or problem.startswith("cannot read its dynamic section")
