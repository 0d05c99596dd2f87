"""What DKMS prints when it built and installed a module, read from its format strings
(dkms-project/dkms, `dkms.in`): DKMS 3 "Building module(s)... done.", "Installing
/lib/modules/<kernel>/<dir>/<module>.ko[.xz|.zst]" and "Running depmod... done."; DKMS 2
"DKMS: install completed."; and xdna-driver's own src/driver/tools/dkms_driver.sh
(the packages' postinst): "Successfully installed and enabled DKMS for <pkg>/<version>"
("intalled" in every 1.x branch and 2.21). The modules are the NPU stack's: amdxdna, and
XRT's own that its packages build with DKMS (src/CMake/config/dkms-xocl and dkms-zocl:
xocl, xclmgmt, zocl). Pure; nothing is run here.
"""

from __future__ import annotations

import re

_BUILT_RE = re.compile(r"^\s*Building module(?:\(s\))?:?\.*\s*done\.", re.M)
_BUILD_FAILED_RE = re.compile(r"\(bad exit status: \d+\)|Error! Bad return status for module build")
_MODULES = r"amdxdna|xocl|xclmgmt|zocl"
_INSTALLED_RE = re.compile(rf"^\s*Installing /lib/modules/(\S+?)/\S*/({_MODULES})\.ko\S*\s*$", re.M)
_DKMS2_RE = re.compile(r"^DKMS: install completed\.", re.M)
_XDNA_SCRIPT_RE = re.compile(
    r"^Successfully in(?:s)?talled and enabled DKMS for (\S*amdxdna\S*)\s*$", re.M
)
_DKMS2_MODULE_RE = re.compile(rf"^({_MODULES})(?:\.ko\S*)?:\s*$|\b({_MODULES})\.ko\b", re.M)


def stack_module_installed(text: str) -> str | None:
    """ "DKMS built and installed amdxdna for 6.17.0-14-generic" when the log shows one of
    the stack's out-of-tree modules built and installed, and no module build failed; None
    otherwise."""
    if _BUILD_FAILED_RE.search(text):
        return None
    installed = _INSTALLED_RE.search(text)
    if installed and _BUILT_RE.search(text[: installed.start()]):
        return f"DKMS built and installed {installed.group(2)} for {installed.group(1)}"
    module = _DKMS2_MODULE_RE.search(text) if _DKMS2_RE.search(text) else None
    if module is not None:
        return f"DKMS built and installed {module.group(1) or module.group(2)}"
    script = _XDNA_SCRIPT_RE.search(text)
    if script:
        return f"xdna-driver's dkms_driver.sh installed and enabled {script.group(1)}"
    return None
