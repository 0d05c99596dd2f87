"""A failed test connected to the files a partial mirror lacked."""

from __future__ import annotations

from xdnaforge.tools.ctest import related_missing

MISSING = {
    "xrt": ["src/runtime_src/tools/xclbinutil/unittests/test_data/sample_1_2018.2.xclbin"],
    "xrt/src/runtime_src/core/common/elf": ["tests/elf_examples/64bitLOAD.elf"],
}


def test_a_word_of_the_test_name_in_the_path_connects_it() -> None:
    assert related_missing(["[xclbinutil]:xclbintest"], MISSING, "") == [
        "xrt/src/runtime_src/tools/xclbinutil/unittests/test_data/sample_1_2018.2.xclbin"
    ]


def test_the_log_naming_the_file_connects_it_and_unrelated_tests_stay_apart() -> None:
    log = "ERROR: cannot open 64bitLOAD.elf"
    assert related_missing(["elfio_load"], MISSING, log) == [
        "xrt/src/runtime_src/core/common/elf/tests/elf_examples/64bitLOAD.elf"
    ]
    assert related_missing(["aie2_basic_txn"], MISSING, "Failed") == []
