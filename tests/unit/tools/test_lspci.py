"""lspci -k output, in the shapes pciutils' format strings print."""

from __future__ import annotations

from xdnaforge.diagnosis.log_verdict import FAILURE, HEALTHY, judge
from xdnaforge.tools.lspci import PciDevice, devices

# lspci -nnk as pciutils 3.13 prints it (lspci.c show_device, ls-kernel.c show_kernel)
NPU = (
    "c5:00.1 Signal processing controller [1180]: Advanced Micro Devices, Inc. [AMD] "
    "Strix/Krackan/Strix Halo Neural Processing Unit [1022:17f0] (rev 10)\n"
    "\tSubsystem: Lenovo Device [17aa:38c0]\n"
    "\tKernel driver in use: amdxdna\n"
    "\tKernel modules: amdxdna\n"
)
GPU = (
    "0000:c4:00.0 Display controller [0380]: Advanced Micro Devices, Inc. [AMD/ATI] "
    "Strix [Radeon 880M / 890M] [1002:150e] (rev c1)\n"
    "\tKernel driver in use: amdgpu\n"
    "\tKernel modules: amdgpu\n"
)


def test_each_device_block_with_its_driver_and_modules() -> None:
    found = devices(GPU + NPU)
    assert [d.slot for d in found] == ["0000:c4:00.0", "c5:00.1"]
    assert found[1] == PciDevice("c5:00.1", found[1].description, "amdxdna", ("amdxdna",))
    # lspci without -k says nothing of drivers: no device is read from it
    assert devices(NPU.split("\n")[0] + "\n") == []


def test_amdxdna_in_use_is_a_bound_driver() -> None:
    verdict = judge(GPU + NPU)
    assert verdict.status == HEALTHY
    assert verdict.evidence == "lspci: amdxdna bound to c5:00.1"


def test_an_npu_without_a_driver_in_use_is_a_finding() -> None:
    unbound = NPU.replace("\tKernel driver in use: amdxdna\n", "")
    verdict = judge("lspci: Unable to load libkmod resources: error -2\n" + unbound)
    assert verdict.status == FAILURE
    assert verdict.diagnoses[0].code == "npu-driver-not-bound"
    assert "c5:00.1" in verdict.diagnoses[0].cause
    # the libkmod message is a note, never the failure
    assert judge("lspci: Unable to load libkmod resources: error -2\n" + GPU).status != FAILURE


# lspci -vnn (lspci.c show_bases): a BAR with memory decoding off is "[disabled]"
VERBOSE = (
    "c7:00.1 Signal processing controller [1180]: Advanced Micro Devices, Inc. [AMD] "
    "Device [1022:17f0] (rev 11)\n"
    "\tSubsystem: Advanced Micro Devices, Inc. [AMD] Device [1022:17f0]\n"
    "\tFlags: fast devsel, IRQ 255, IOMMU group 28\n"
    "\tMemory at d4800000 (32-bit, non-prefetchable) [disabled] [size=1M]\n"
    "\tMemory at 9000000000 (64-bit, prefetchable) [disabled] [size=512K]\n"
    "\tCapabilities: <access denied>\n"
)


def test_an_npu_whose_memory_no_driver_enabled_is_a_finding() -> None:
    from xdnaforge.tools.lspci import memory_disabled

    assert memory_disabled(VERBOSE, "1022", frozenset({"17f0"})) == ["c7:00.1"]
    verdict = judge(VERBOSE)
    assert verdict.status == FAILURE
    assert [(d.code, d.family) for d in verdict.diagnoses] == [("npu-memory-disabled", "module")]
    # one region enabled: a driver enabled the device; another device's disabled memory is
    # not the NPU's
    enabled = VERBOSE.replace("(64-bit, prefetchable) [disabled]", "(64-bit, prefetchable)")
    assert memory_disabled(enabled, "1022", frozenset({"17f0"})) == []
    assert memory_disabled(VERBOSE, "1022", frozenset({"1502"})) == []
    # -vv names each region
    very = VERBOSE.replace("\tMemory at", "\tRegion 0: Memory at")
    assert memory_disabled(very, "1022", frozenset({"17f0"})) == ["c7:00.1"]
