"""Build logs by their first real error: what it names decides the diagnosis."""

from __future__ import annotations

from xdnaforge.diagnosis.build_log import provider
from xdnaforge.diagnosis.log_verdict import FAILURE, judge

OPENCL_WERROR = """[ 45%] Building CXX object core_common_objects.dir/api/xrt_kernel.cpp.o
In file included from /usr/include/CL/cl_ext.h:29,
/usr/include/CL/cl_icd.h:1247:33: error: 'pfn' declared here [-Werror=unused-parameter]
cc1plus: all warnings being treated as errors
make[2]: *** [core_common_objects.dir/build.make:76: xrt_kernel.cpp.o] Error 1
"""


def test_a_werror_inside_a_dependencys_headers_names_warning_header_and_package() -> None:
    verdict = judge(OPENCL_WERROR)
    assert verdict.status == FAILURE
    first = verdict.diagnoses[0]
    assert first.code == "build-werror-in-dependency"
    assert "-Wunused-parameter" in first.cause
    assert "/usr/include/CL/cl_icd.h" in first.cause
    assert "opencl-headers" in first.cause
    assert "-Wno-error=unused-parameter" in first.fix
    # make's own error only ranks after what caused it
    assert verdict.diagnoses[-1].code != "build-werror-in-dependency"


def test_a_werror_in_the_projects_own_code_is_the_plain_werror() -> None:
    line = "/work/XRT/src/core/api/xrt_bo.cpp:12:3: error: unused [-Werror=unused-variable]\n"
    assert judge(line).diagnoses[0].code == "build-werror"


def test_providers_of_headers_and_symbols() -> None:
    assert provider(header="CL/cl_icd.h").startswith("the OpenCL headers")
    assert provider(symbol="xrt::bo::sync").startswith("XRT's libxrt_coreutil")
    assert provider(header="frob/x.h") == ""
