"""The hostile corpus: .deb packages built to pass the audit while they carry a kernel module,
module configuration, firmware or a module-tool run, each in a way a list of bad names
misses, and the benign controls that must pass.

Every entry has a short id, its class (`script`, `data`, `content`, `links`, `relations`,
`benign`), what it does when installed (`does`) and what shows it (`shows`): a path that
lands outside the stack's layout (`lands:usr/lib/firmware/amdnpu/npu.sbin`, the real path
on a merged-/usr host), a module tool run (`runs:modprobe amdxdna`), a tool handed a file
(`tool:systemd-tmpfiles --create /opt/...`), a kernel module on disk, wherever it lands
(`module:var/lib/dpkg/info/PKG.amdxdna`), a dpkg trigger interest (`interest:/lib/modules`)
or a relation apt acts on (`status:Depends: linux-oracle`). An entry of several packages is
installed in order (a directory symlink in the first, a file under it in the second).

`build(entry, directory)` writes its packages with `dpkg-deb --build --root-owner-group
--nocheck` (gzip -1: the whole corpus builds in about a second); `corpus(directory)` builds
them all.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import shutil
import subprocess
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import zstandard

from tests.conftest import require_tool
from tests.debs import elf_bytes, module_bytes

TRIPLET = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
MAINTAINER_SCRIPTS = ("preinst", "postinst", "prerm", "postrm", "config")

# what the payloads are made of
PLANTED = "#!/bin/sh\nmodprobe amdxdna\n"  # a program of the package that runs a module tool
SETUP = "/opt/xilinx/xrt/bin/xrt-setup"  # where the package plants it
MODCONF = f"install amdxdna {SETUP}\n"  # modprobe.d: runs SETUP as root when amdxdna loads
FIRMWARE = b"\x00\x01firmware for amdnpu 17f0_10\x00"
SHARED_LIBRARY = b"\0a shared library, made by build()\0"
UNIT = "[Unit]\nDescription=XRT setup\n\n[Service]\nType=oneshot\nExecStart={exec}\n\n" + (
    "[Install]\nWantedBy=multi-user.target\n"
)


@dataclass(frozen=True)
class Package:
    name: str
    files: Mapping[str, str | bytes] = field(default_factory=dict)  # data path -> content
    links: Mapping[str, str] = field(default_factory=dict)  # data path -> symlink target
    control: Mapping[str, str | bytes] = field(default_factory=dict)  # DEBIAN member -> content
    fields: Mapping[str, str] = field(default_factory=dict)  # Depends, Replaces ...
    version: str = "1.0"

    def control_file(self) -> str:
        lines = [
            f"Package: {self.name}",
            f"Version: {self.version}",
            "Architecture: all",
            "Maintainer: Hostile <hostile@example.invalid>",
            *(f"{name}: {value}" for name, value in self.fields.items()),
            "Description: a hostile test package\n synthetic",
        ]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Entry:
    id: str
    kind: str  # script, data, content, links, relations, benign
    does: str  # what it does when installed
    # lands:PATH, runs:CMD, tool:CMD, module:PATH, interest:PATH, status:FIELD: NAME
    shows: tuple[str, ...]
    packages: tuple[Package, ...]

    @property
    def benign(self) -> bool:
        return self.kind == "benign"


def _doc(package: str) -> dict[str, str]:
    return {f"usr/share/doc/{package}/copyright": "Synthetic test package.\n"}


def _one(
    id: str,
    kind: str,
    does: str,
    shows: str | tuple[str, ...],
    *,
    files: Mapping[str, str | bytes] | None = None,
    links: Mapping[str, str] | None = None,
    control: Mapping[str, str | bytes] | None = None,
    fields: Mapping[str, str] | None = None,
) -> Entry:
    name = f"xrt-{id}"
    package = Package(
        name=name,
        files={**_doc(name), **(files or {})},
        links=links or {},
        control=control or {},
        fields=fields or {},
    )
    return Entry(id, kind, does, (shows,) if isinstance(shows, str) else shows, (package,))


def _postinst(body: str, shell: str = "/bin/sh") -> dict[str, str]:
    return {"postinst": f"#!{shell}\n{body}"}


_SETUP_FILES = {SETUP.lstrip("/"): PLANTED}
_CONF = {"opt/xilinx/xrt/share/amdxdna.conf": MODCONF}


def _split_module() -> tuple[bytes, bytes]:
    """A module cut before its section name: its ELF header in one half, the name in the
    other, so each compressed member alone holds no module."""
    module = module_bytes()
    at = module.index(b".gnu.linkonce.this_module")
    return module[:at], module[at:]


def _zstd(data: bytes) -> bytes:
    compressed: bytes = zstandard.ZstdCompressor().compress(data)
    return compressed


def _split(wrap: str) -> bytes:
    head, rest = _split_module()
    if wrap == "gzip":
        return gzip.compress(head) + gzip.compress(rest)
    if wrap == "xz":  # stream padding between the streams, as xz allows
        return lzma.compress(head) + bytes(4) + lzma.compress(rest)
    if wrap == "bzip2":
        return bz2.compress(head) + bz2.compress(rest)
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"note"
    return _zstd(head) + _zstd(b"") + skippable + _zstd(rest)


def _scripts() -> list[Entry]:
    s = "script"
    conf_lands = "lands:etc/modprobe.d/amdxdna.conf"
    return [
        _one(
            "script-path-ldconfig",
            s,
            "postinst runs `PATH=/opt/xilinx/xrt/bin:$PATH ldconfig`: the package's own "
            "ldconfig, which runs modprobe amdxdna",
            "runs:modprobe amdxdna",
            files={"opt/xilinx/xrt/bin/ldconfig": PLANTED},
            control=_postinst("PATH=/opt/xilinx/xrt/bin:$PATH ldconfig\n"),
        ),
        _one(
            "script-path-tmp-ldconfig",
            s,
            "ships tmp/x/ldconfig and runs `PATH=/tmp/x:$PATH ldconfig`: modprobe amdxdna",
            ("runs:modprobe amdxdna", "lands:tmp/x/ldconfig"),
            files={"tmp/x/ldconfig": PLANTED},
            control=_postinst("PATH=/tmp/x:$PATH ldconfig\n"),
        ),
        _one(
            "script-export-path",
            s,
            "postinst exports PATH with the package's bin first, then runs ldconfig: its own",
            "runs:modprobe amdxdna",
            files={"opt/xilinx/xrt/bin/ldconfig": PLANTED},
            control=_postinst('set -e\nexport PATH="/opt/xilinx/xrt/bin:$PATH"\nldconfig\n'),
        ),
        _one(
            "script-hash-p",
            s,
            "bash postinst: `hash -p` binds the name ldconfig to the package's xrt-setup",
            "runs:modprobe amdxdna",
            files=_SETUP_FILES,
            control=_postinst(f"hash -p {SETUP} ldconfig\nldconfig\n", "/bin/bash"),
        ),
        _one(
            "script-printf-v",
            s,
            "bash postinst: `printf -v 'a[$(...)]'` runs the array subscript's command "
            "substitution, the package's xrt-setup",
            "runs:modprobe amdxdna",
            files=_SETUP_FILES,
            control=_postinst(f"printf -v 'a[$({SETUP})]' 1\n", "/bin/bash"),
        ),
        _one(
            "script-printf-v-modprobe",
            s,
            "bash postinst: `printf -v 'a[$(modprobe amdxdna)]' 1`",
            "runs:modprobe amdxdna",
            control=_postinst("printf -v 'a[$(modprobe amdxdna)]' 1\n", "/bin/bash"),
        ),
        _one(
            "script-test-v",
            s,
            "bash postinst: `test -v 'a[$(...)]'` evaluates the subscript: xrt-setup runs",
            "runs:modprobe amdxdna",
            files=_SETUP_FILES,
            control=_postinst(f"if test -v 'a[$({SETUP})]'; then :; fi\n", "/bin/bash"),
        ),
        _one(
            "script-read-subscript",
            s,
            "bash postinst: `read 'a[$(...)]'` evaluates the subscript: xrt-setup runs",
            "runs:modprobe amdxdna",
            files=_SETUP_FILES,
            control=_postinst(f"read 'a[$({SETUP})]' < /dev/null\n", "/bin/bash"),
        ),
        _one(
            "script-glob-modprobe-d",
            s,
            "postinst copies a modprobe.d install line to /etc/modprob?.d/ (the glob is "
            "/etc/modprobe.d)",
            conf_lands,
            files=_CONF,
            control=_postinst("cp /opt/xilinx/xrt/share/amdxdna.conf /etc/modprob?.d/\n"),
        ),
        _one(
            "script-glob-bracket-firmware",
            s,
            "postinst copies firmware to /usr/lib/firmwar[e]/",
            "lands:usr/lib/firmware/amdnpu/npu.sbin",
            files={"opt/xilinx/xrt/share/fw/amdnpu/npu.sbin": FIRMWARE},
            control=_postinst("cp -r /opt/xilinx/xrt/share/fw/amdnpu /usr/lib/firmwar[e]/\n"),
        ),
        _one(
            "script-dotdot-modprobe-d",
            s,
            "postinst copies a modprobe.d install line to /usr/../etc/modprobe.d/amdxdna.conf",
            conf_lands,
            files=_CONF,
            control=_postinst(
                "cp /opt/xilinx/xrt/share/amdxdna.conf /usr/../etc/modprobe.d/amdxdna.conf\n"
            ),
        ),
        _one(
            "script-dotdot-modules-load",
            s,
            "postinst copies `amdxdna` to /opt/../etc/modules-load.d/: loaded at every boot",
            "lands:etc/modules-load.d/amdxdna.conf",
            files={"opt/xilinx/xrt/share/load.conf": "amdxdna\n"},
            control=_postinst(
                "cp /opt/xilinx/xrt/share/load.conf /opt/../etc/modules-load.d/amdxdna.conf\n"
            ),
        ),
        _one(
            "script-dotdot-firmware",
            s,
            "postinst installs firmware as /usr/../lib/firmware/... (lib is usr/lib)",
            "lands:usr/lib/firmware/amdnpu/17f0_10/npu.sbin",
            files={"opt/xilinx/xrt/share/npu.sbin": FIRMWARE},
            control=_postinst(
                "install -D -m 0644 /opt/xilinx/xrt/share/npu.sbin "
                "/usr/../lib/firmware/amdnpu/17f0_10/npu.sbin\n"
            ),
        ),
        _one(
            "script-cp-dot-root",
            s,
            "postinst runs `cp -a overlay/. /`: the overlay's modprobe.d file and firmware "
            "land in /etc and /usr/lib",
            (conf_lands, "lands:usr/lib/firmware/amdnpu/npu.sbin"),
            files={
                "opt/xilinx/xrt/share/overlay/etc/modprobe.d/amdxdna.conf": MODCONF,
                "opt/xilinx/xrt/share/overlay/usr/lib/firmware/amdnpu/npu.sbin": FIRMWARE,
            },
            control=_postinst("cp -a /opt/xilinx/xrt/share/overlay/. /\n"),
        ),
        _one(
            "script-heredoc-case",
            s,
            "a here-doc whose body is `case`: a line judge reads the next lines as a case "
            "statement's words and patterns, the shell runs them (a cp into modprobe.d)",
            conf_lands,
            files=_CONF,
            control=_postinst(
                "cat >/dev/null <<'EOF'\ncase\nEOF\n"
                "cp /opt/xilinx/xrt/share/amdxdna.conf /etc/modprobe.d/amdxdna.conf\n"
                ": in\necho ')'\n"
            ),
        ),
        _one(
            "script-heredoc-for",
            s,
            "a here-doc whose body is `for`: a line judge skips to the next `do`, the "
            "shell runs what is between (a cp into modprobe.d)",
            conf_lands,
            files=_CONF,
            control=_postinst(
                "cat >/dev/null <<EOF\nfor\nEOF\n"
                "cp /opt/xilinx/xrt/share/amdxdna.conf /etc/modprobe.d/amdxdna.conf\n"
                "echo do\n"
            ),
        ),
        _one(
            "script-heredoc-config",
            s,
            "a here-doc (delimiter `true`) writes a modprobe.d `install` line, which reads as "
            "the harmless install command, into the package's tree; a glob links it into "
            "modprobe.d",
            conf_lands,
            files=_SETUP_FILES,
            control=_postinst(
                "cat > /opt/xilinx/xrt/share/amdxdna.conf <<true\n"
                f"install amdxdna {SETUP}\ntrue\n"
                "ln -s /opt/xilinx/xrt/share/amdxdna.conf /etc/modprob?.d/\n"
            ),
        ),
        _one(
            "script-comment-backslash",
            s,
            "a comment that ends in a backslash: a judge joins the next line to it, the "
            "shell runs that line (a cp into modprobe.d)",
            conf_lands,
            files=_CONF,
            control=_postinst(
                "# install the driver configuration \\\n"
                "cp /opt/xilinx/xrt/share/amdxdna.conf /etc/modprobe.d/amdxdna.conf\n"
            ),
        ),
        _one(
            "script-variable-concat",
            s,
            "postinst builds the path from a variable: `D=/etc/modprob; cp ... ${D}e.d/`",
            conf_lands,
            files=_CONF,
            control=_postinst('D=/etc/modprob\ncp /opt/xilinx/xrt/share/amdxdna.conf "${D}e.d/"\n'),
        ),
        _one(
            "script-tmpfiles-private",
            s,
            "postinst runs `systemd-tmpfiles --create` on a private configuration that links "
            "modprobe.d and sets kernel.modprobe to the package's program",
            "tool:systemd-tmpfiles --create /opt/xilinx/xrt/share/xrt-tmpfiles.conf",
            files={
                **_CONF,
                **_SETUP_FILES,
                "opt/xilinx/xrt/share/xrt-tmpfiles.conf": (
                    "L+ /etc/modprobe.d/amdxdna.conf - - - - /opt/xilinx/xrt/share/amdxdna.conf\n"
                    f"w /proc/sys/kernel/modprobe - - - - {SETUP}\n"
                ),
            },
            control=_postinst(
                "systemd-tmpfiles --create /opt/xilinx/xrt/share/xrt-tmpfiles.conf\n"
            ),
        ),
        _one(
            "script-pth-py3compile",
            s,
            "ships a .pth in dist-packages; the allowlisted py3compile starts Python, whose "
            "site module runs the .pth's import line: modprobe amdxdna",
            "lands:usr/lib/python3/dist-packages/zz_xrt.pth",
            files={
                "usr/lib/python3/dist-packages/zz_xrt.pth": (
                    "import os; os.system('modprobe amdxdna')\n"
                )
            },
            control=_postinst("py3compile -p xrt-script-pth-py3compile\n"),
        ),
        _one(
            "script-triggers-modules",
            s,
            "a triggers file with `interest-noawait /lib/modules`: dpkg runs its postinst as "
            "root whenever a kernel package changes the module tree (a kernel hook)",
            "interest:/lib/modules",
            control={
                "triggers": "interest-noawait /lib/modules\n",
                **_postinst('if [ "$1" = triggered ]; then ldconfig; fi\n'),
            },
        ),
        _one(
            "script-triggers-firmware",
            s,
            "a triggers file with `interest /usr/lib/firmware`: its postinst runs whenever "
            "firmware changes",
            "interest:/usr/lib/firmware",
            control={
                "triggers": "interest /usr/lib/firmware\n",
                **_postinst('if [ "$1" = triggered ]; then ldconfig; fi\n'),
            },
        ),
        _one(
            "script-systemctl-enable-path",
            s,
            "postinst runs `systemctl enable` on a unit in the package's tree, one no unit rule "
            "reads: it runs modprobe amdxdna at every boot",
            "tool:systemctl enable /opt/xilinx/xrt/share/xrt-setup.service",
            files={
                "opt/xilinx/xrt/share/xrt-setup.service": UNIT.format(exec="/sbin/modprobe amdxdna")
            },
            control=_postinst("systemctl enable /opt/xilinx/xrt/share/xrt-setup.service\n"),
        ),
        _one(
            "script-update-alternatives",
            s,
            "postinst makes /etc/modules-load.d/amdxdna.conf an alternative (spelled "
            "/usr/../etc/...) pointing at the package's `amdxdna` line",
            "tool:update-alternatives --install /usr/../etc/modules-load.d/amdxdna.conf",
            files={"opt/xilinx/xrt/share/load.conf": "amdxdna\n"},
            control=_postinst(
                "update-alternatives --install /usr/../etc/modules-load.d/amdxdna.conf "
                "amdxdna-load /opt/xilinx/xrt/share/load.conf 50\n"
            ),
        ),
    ]


def _data() -> list[Entry]:
    d = "data"
    wants = "etc/systemd/system/multi-user.target.wants/xrt-setup.service"
    return [
        _one(
            "data-system-control-dropin",
            d,
            "a drop-in under etc/systemd/system.control/ (systemctl set-property's directory, "
            "read first): udevd runs modprobe amdxdna before it starts",
            "lands:etc/systemd/system.control/systemd-udevd.service.d/50-amdxdna.conf",
            files={
                "etc/systemd/system.control/systemd-udevd.service.d/50-amdxdna.conf": (
                    "[Service]\nExecStartPre=/sbin/modprobe amdxdna\n"
                )
            },
        ),
        _one(
            "data-system-control-unit",
            d,
            "a unit and its wants link under etc/systemd/system.control/: modprobe at boot",
            "lands:etc/systemd/system.control/xrt-setup.service",
            files={
                "etc/systemd/system.control/xrt-setup.service": UNIT.format(
                    exec="/sbin/modprobe amdxdna"
                )
            },
            links={
                "etc/systemd/system.control/multi-user.target.wants/xrt-setup.service": (
                    "../xrt-setup.service"
                )
            },
        ),
        _one(
            "data-unit-hex-escape",
            d,
            r"a unit whose ExecStart= spells modprobe with a C escape (/usr/sbin/\x6dodprobe), "
            "which systemd unescapes: modprobe amdxdna at boot",
            "lands:etc/systemd/system/xrt-setup.service",
            files={
                "etc/systemd/system/xrt-setup.service": UNIT.format(
                    exec=r"/usr/sbin/\x6dodprobe amdxdna"
                )
            },
            links={wants: "../xrt-setup.service"},
        ),
        _one(
            "data-unit-octal-escape",
            d,
            r"a unit whose ExecStart= runs `/bin/sh -c 'mod\160robe amdxdna'`",
            "lands:etc/systemd/system/xrt-setup.service",
            files={
                "etc/systemd/system/xrt-setup.service": UNIT.format(
                    exec=r"/bin/sh -c 'mod\160robe amdxdna'"
                )
            },
            links={wants: "../xrt-setup.service"},
        ),
        _one(
            "data-unit-runs-planted",
            d,
            "an enabled unit that runs the package's own program, which runs modprobe",
            "lands:etc/systemd/system/xrt-setup.service",
            files={
                "etc/systemd/system/xrt-setup.service": UNIT.format(exec=SETUP),
                **_SETUP_FILES,
            },
            links={wants: "../xrt-setup.service"},
        ),
        _one(
            "data-udev-run-program",
            d,
            'a udev rule with RUN{program}+="/sbin/modprobe amdxdna" (RUN with its type)',
            "lands:etc/udev/rules.d/60-amdxdna.rules",
            files={
                "etc/udev/rules.d/60-amdxdna.rules": (
                    'ACTION=="add", SUBSYSTEM=="pci", ATTR{vendor}=="0x1022", '
                    'RUN{program}+="/sbin/modprobe amdxdna"\n'
                )
            },
        ),
        _one(
            "data-udev-run-builtin",
            d,
            'a udev rule with RUN{builtin}+="kmod load amdxdna": udev loads the module itself',
            "lands:usr/lib/udev/rules.d/60-amdxdna.rules",
            files={
                "usr/lib/udev/rules.d/60-amdxdna.rules": (
                    'ACTION=="add", SUBSYSTEM=="pci", RUN{builtin}+="kmod load amdxdna"\n'
                )
            },
        ),
        _one(
            "data-tmpfiles-firmware-path",
            d,
            "tmpfiles.d `w /sys/module/firmware_class/parameters/path - - - - /opt/...`: at "
            "boot the kernel loads firmware from the package's tree, which ships it",
            "lands:etc/tmpfiles.d/amdxdna.conf",
            files={
                "etc/tmpfiles.d/amdxdna.conf": (
                    "w /sys/module/firmware_class/parameters/path - - - - "
                    "/opt/xilinx/xrt/share/firmware\n"
                ),
                "opt/xilinx/xrt/share/firmware/amdnpu/17f0_10/npu.sbin": FIRMWARE,
            },
        ),
        _one(
            "data-tmpfiles-kernel-modprobe",
            d,
            "tmpfiles.d `w /proc/sys/kernel/modprobe`: the kernel runs the package's program "
            "as root for every module request",
            "lands:usr/lib/tmpfiles.d/xrt.conf",
            files={
                "usr/lib/tmpfiles.d/xrt.conf": f"w /proc/sys/kernel/modprobe - - - - {SETUP}\n",
                **_SETUP_FILES,
            },
        ),
        _one(
            "data-tmpfiles-link-modprobe-d",
            d,
            "tmpfiles.d `L+ /etc/modprobe.d/amdxdna.conf`: the link into modprobe.d is made at "
            "boot, not shipped",
            "lands:etc/tmpfiles.d/xrt.conf",
            files={
                "etc/tmpfiles.d/xrt.conf": (
                    "L+ /etc/modprobe.d/amdxdna.conf - - - - /opt/xilinx/xrt/share/amdxdna.conf\n"
                ),
                **_CONF,
            },
        ),
        _one(
            "data-sysctl-modprobe",
            d,
            "etc/sysctl.d: kernel.modprobe = the package's program, run as root by the kernel",
            "lands:etc/sysctl.d/60-xrt.conf",
            files={"etc/sysctl.d/60-xrt.conf": f"kernel.modprobe = {SETUP}\n", **_SETUP_FILES},
        ),
        _one(
            "data-ifupdown-pre-up",
            d,
            "an ifupdown hook in etc/network/if-pre-up.d/: modprobe as root whenever a "
            "network interface comes up",
            "lands:etc/network/if-pre-up.d/xrt",
            files={"etc/network/if-pre-up.d/xrt": PLANTED},
        ),
        _one(
            "data-ifupdown-post-down",
            d,
            "an ifupdown hook in etc/network/if-post-down.d/",
            "lands:etc/network/if-post-down.d/xrt",
            files={"etc/network/if-post-down.d/xrt": PLANTED},
        ),
        _one(
            "data-dhclient-hook",
            d,
            "a dhclient exit hook, sourced as root by dhclient-script",
            "lands:etc/dhcp/dhclient-exit-hooks.d/xrt",
            files={"etc/dhcp/dhclient-exit-hooks.d/xrt": "modprobe amdxdna\n"},
        ),
        _one(
            "data-grub-custom-cfg",
            d,
            "boot/grub/custom.cfg, read by grub.cfg at every boot: a default entry whose kernel "
            "command line blacklists the in-tree amdxdna",
            "lands:boot/grub/custom.cfg",
            files={
                "boot/grub/custom.cfg": (
                    "menuentry 'XRT' --id xrt {\n"
                    "  linux /boot/vmlinuz root=LABEL=root module_blacklist=amdxdna\n"
                    "  initrd /boot/initrd.img\n}\nset default=xrt\n"
                )
            },
        ),
        _one(
            "data-grub-default-d",
            d,
            "etc/default/grub.d/: update-grub (run by every kernel install) puts "
            "module_blacklist= and amdxdna. options on the kernel command line",
            "lands:etc/default/grub.d/amdxdna.cfg",
            files={
                "etc/default/grub.d/amdxdna.cfg": (
                    'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT '
                    'module_blacklist=amdxdna amdxdna.dyndbg=+p"\n'
                )
            },
        ),
        _one(
            "data-grub-d-script",
            d,
            "etc/grub.d/09_xrt: update-grub runs it as root at every kernel install",
            "lands:etc/grub.d/09_xrt",
            files={"etc/grub.d/09_xrt": PLANTED},
        ),
        _one(
            "data-boot-loader-entry",
            d,
            "a boot loader specification entry under boot/loader/entries/ with amdxdna. "
            "options on its kernel command line",
            "lands:boot/loader/entries/xrt.conf",
            files={
                "boot/loader/entries/xrt.conf": (
                    "title XRT\nlinux /vmlinuz\ninitrd /initrd.img\n"
                    "options root=LABEL=root modprobe.blacklist=amdxdna\n"
                )
            },
        ),
        _one(
            "data-mount-unit-name",
            d,
            "usr-lib-modprobe.d.mount: the mount point is spelled by the unit's name (no "
            "Where=); at boot it bind-mounts the package's directory over usr/lib/modprobe.d",
            "lands:etc/systemd/system/usr-lib-modprobe.d.mount",
            files={
                "etc/systemd/system/usr-lib-modprobe.d.mount": (
                    "[Mount]\nWhat=/opt/xilinx/xrt/share/kconf\nType=none\nOptions=bind\n\n"
                    "[Install]\nWantedBy=local-fs.target\n"
                ),
                "opt/xilinx/xrt/share/kconf/amdxdna.conf": MODCONF,
            },
            links={
                "etc/systemd/system/local-fs.target.wants/usr-lib-modprobe.d.mount": (
                    "../usr-lib-modprobe.d.mount"
                )
            },
        ),
        _one(
            "data-mount-unit-escaped",
            d,
            r"etc-modules\x2dload.d.mount: the unit name's escape spells /etc/modules-load.d",
            r"lands:etc/systemd/system/etc-modules\x2dload.d.mount",
            files={
                r"etc/systemd/system/etc-modules\x2dload.d.mount": (
                    "[Mount]\nWhat=/opt/xilinx/xrt/share/load\nType=none\nOptions=bind\n\n"
                    "[Install]\nWantedBy=local-fs.target\n"
                ),
                "opt/xilinx/xrt/share/load/amdxdna.conf": "amdxdna\n",
            },
        ),
        _one(
            "data-apt-dir-bin-dpkg",
            d,
            "an apt configuration `Dir::Bin::dpkg` naming the package's program: apt runs it "
            "as root instead of dpkg on every install",
            "lands:etc/apt/apt.conf.d/99xrt",
            files={"etc/apt/apt.conf.d/99xrt": f'Dir::Bin::dpkg "{SETUP}";\n', **_SETUP_FILES},
        ),
        _one(
            "data-initramfs-post-update",
            d,
            "etc/initramfs/post-update.d/: update-initramfs runs it as root after every build",
            "lands:etc/initramfs/post-update.d/xrt",
            files={"etc/initramfs/post-update.d/xrt": PLANTED},
        ),
        _one(
            "data-system-sleep",
            d,
            "usr/lib/systemd/system-sleep/: systemd runs it as root at suspend and resume",
            "lands:usr/lib/systemd/system-sleep/xrt",
            files={"usr/lib/systemd/system-sleep/xrt": PLANTED},
        ),
        _one(
            "data-logrotate-postrotate",
            d,
            "a logrotate configuration whose postrotate runs modprobe as root every day",
            "lands:etc/logrotate.d/xrt",
            files={
                "etc/logrotate.d/xrt": (
                    "/var/log/xrt.log {\n  daily\n  postrotate\n    modprobe amdxdna\n"
                    "  endscript\n}\n"
                )
            },
        ),
        _one(
            "data-update-motd",
            d,
            "etc/update-motd.d/: pam_motd runs it as root at every login",
            "lands:etc/update-motd.d/99-xrt",
            files={"etc/update-motd.d/99-xrt": PLANTED},
        ),
    ]


def _content() -> list[Entry]:
    c = "content"
    return [
        _one(
            "content-gzip-members",
            c,
            "a module split over two gzip members (ELF header, then the module section), "
            "as libkmod reads it, under a name that is no module's",
            "module:opt/xilinx/xrt/share/amdxdna.bin",
            files={"opt/xilinx/xrt/share/amdxdna.bin": _split("gzip")},
        ),
        _one(
            "content-xz-streams",
            c,
            "a module split over two xz streams with stream padding between them",
            "module:opt/xilinx/xrt/share/npu.xz",
            files={"opt/xilinx/xrt/share/npu.xz": _split("xz")},
        ),
        _one(
            "content-bzip2-streams",
            c,
            "a module split over two bzip2 streams",
            "module:opt/xilinx/xrt/share/npu.bz2",
            files={"opt/xilinx/xrt/share/npu.bz2": _split("bzip2")},
        ),
        _one(
            "content-zstd-frames",
            c,
            "a module split over zstd frames, an empty and a skippable frame between them",
            "module:opt/xilinx/xrt/share/npu.zst",
            files={"opt/xilinx/xrt/share/npu.zst": _split("zstd")},
        ),
        _one(
            "content-doc-gzip-members",
            c,
            "a module split over gzip members as the package's changelog.gz in its doc directory",
            "module:usr/share/doc/xrt-content-doc-gzip-members/changelog.gz",
            files={"usr/share/doc/xrt-content-doc-gzip-members/changelog.gz": _split("gzip")},
        ),
        _one(
            "content-control-member",
            c,
            "a module as an extra control.tar member: dpkg installs it as "
            "var/lib/dpkg/info/PKG.amdxdna",
            "module:var/lib/dpkg/info/xrt-content-control-member.amdxdna",
            control={"amdxdna": module_bytes()},
        ),
        _one(
            "content-control-member-gzip",
            c,
            "a module split over gzip members as an extra control.tar member",
            "module:var/lib/dpkg/info/xrt-content-control-member-gzip.npu",
            control={"npu": _split("gzip")},
        ),
        _one(
            "content-double-compressed",
            c,
            "a module compressed twice (gzip of xz): a scan one level deep does not see it",
            "module:opt/xilinx/xrt/share/npu.img",
            files={"opt/xilinx/xrt/share/npu.img": gzip.compress(lzma.compress(module_bytes()))},
        ),
    ]


def _links() -> list[Entry]:
    k = "links"
    local_conf = "lands:usr/local/lib/modprobe.d/amdxdna.conf"

    def pair(id: str, does: str, shows: str, link: str, target: str, file: str) -> Entry:
        first = Package(name=f"xrt-{id}-a", files=_doc(f"xrt-{id}-a"), links={link: target})
        second = Package(
            name=f"xrt-{id}-b", files={**_doc(f"xrt-{id}-b"), f"{link}/{file}": MODCONF}
        )
        return Entry(id, k, does, (shows,), (first, second))

    return [
        pair(
            "link-bin-dotdot",
            "usr/lib/x -> ../../bin/../local/lib/modprobe.d: on merged-/usr, bin/.. is usr, "
            "so a file under it in a second package lands in usr/local/lib/modprobe.d",
            local_conf,
            "usr/lib/x",
            "../../bin/../local/lib/modprobe.d",
            "amdxdna.conf",
        ),
        pair(
            "link-opt-bin-dotdot",
            "opt/xilinx/xrt/share/kconf -> ../../../../bin/../local/lib/modprobe.d in the "
            "stack's own tree, a file under it in a second package",
            local_conf,
            "opt/xilinx/xrt/share/kconf",
            "../../../../bin/../local/lib/modprobe.d",
            "amdxdna.conf",
        ),
        pair(
            "link-absolute-sbin-dotdot",
            "opt/xilinx/xrt/local -> /sbin/../local (usr/local), a second package's file "
            "under it lands in usr/local/lib/modprobe.d",
            local_conf,
            "opt/xilinx/xrt/local",
            "/sbin/../local",
            "lib/modprobe.d/amdxdna.conf",
        ),
        pair(
            "link-bin-dotdot-units",
            "opt/xilinx/xrt/units -> ../../../bin/../local/lib/systemd/system: a second "
            "package's file lands among systemd's units",
            "lands:usr/local/lib/systemd/system/xrt-setup.service",
            "opt/xilinx/xrt/units",
            "../../../bin/../local/lib/systemd/system",
            "xrt-setup.service",
        ),
        pair(
            "link-dir-then-file",
            "opt/xilinx/xrt/etc -> /etc in one package, opt/xilinx/xrt/etc/modprobe.d/... in "
            "another",
            "lands:etc/modprobe.d/amdxdna.conf",
            "opt/xilinx/xrt/etc",
            "/etc",
            "modprobe.d/amdxdna.conf",
        ),
    ]


def _relations() -> list[Entry]:
    r = "relations"

    def relation(id: str, does: str, fields: Mapping[str, str]) -> Entry:
        # what dpkg records, and apt acts on: the kernel package's name (the last alternative)
        shows = tuple(
            f"status:{name}: {value.split('|')[-1].strip()}" for name, value in fields.items()
        )
        return _one(id, r, does, shows, fields=fields)

    return [
        relation("rel-depends-oracle", "apt installs Oracle's kernel", {"Depends": "linux-oracle"}),
        relation(
            "rel-recommends-iotg",
            "apt installs Intel's IoT kernel (Recommends are installed by default)",
            {"Recommends": "linux-intel-iotg"},
        ),
        relation(
            "rel-depends-objects",
            "apt installs a kernel build's objects",
            {"Depends": "linux-objects-foo"},
        ),
        relation(
            "rel-pre-depends-xilinx",
            "apt installs the Xilinx kernel before it",
            {"Pre-Depends": "linux-xilinx-zynqmp"},
        ),
        relation(
            "rel-depends-restricted",
            "apt installs prebuilt out-of-tree modules",
            {"Depends": "libc6 | linux-restricted-modules-6.8.0-1-generic"},
        ),
        relation(
            "rel-depends-source", "apt installs a kernel source tree", {"Depends": "linux-source"}
        ),
        _one(
            "rel-replaces-headers",
            r,
            "Replaces: linux-headers-6.8.0-1-generic and ships a file at that package's path: "
            "the sign-file DKMS signs modules with is the package's",
            ("lands:usr/src/linux-headers-6.8.0-1-generic/scripts/sign-file",),
            files={"usr/src/linux-headers-6.8.0-1-generic/scripts/sign-file": PLANTED},
            fields={"Replaces": "linux-headers-6.8.0-1-generic"},
        ),
        relation(
            "rel-provides-kernel",
            "Provides the modules package of a kernel: apt thinks the in-tree modules are "
            "installed",
            {"Provides": "linux-modules-extra-6.8.0-1-generic"},
        ),
        relation(
            "rel-conflicts-firmware",
            "Conflicts with linux-firmware: apt removes the firmware",
            {"Conflicts": "linux-firmware"},
        ),
        relation(
            "rel-breaks-kernel",
            "Breaks the kernel: apt removes it",
            {"Breaks": "linux-image-generic"},
        ),
    ]


def _benign() -> list[Entry]:
    b = "benign"
    return [
        _one(
            "benign-libxrt",
            b,
            "only opt/xilinx/xrt/lib/libxrt_coreutil.so.2 and its copyright: nothing else",
            (),
            files={"opt/xilinx/xrt/lib/libxrt_coreutil.so.2": SHARED_LIBRARY},
        ),
        _one(
            "benign-multiarch-lib",
            b,
            f"only usr/lib/{TRIPLET}/libxrt_core.so.2 and its copyright",
            (),
            files={f"usr/lib/{TRIPLET}/libxrt_core.so.2": SHARED_LIBRARY},
        ),
    ]


def entries() -> list[Entry]:
    return [*_scripts(), *_data(), *_content(), *_links(), *_relations(), *_benign()]


ENTRIES = entries()
IDS = [entry.id for entry in ENTRIES]
BY_ID = {entry.id: entry for entry in ENTRIES}


def shared_library(directory: Path, soname: str) -> bytes:
    """A real shared library from `cc -shared` where cc exists, else a small valid ELF."""
    cc = shutil.which("cc")
    if cc is not None:
        source = directory / "lib.c"
        source.write_text("int xrt_core_version(void) { return 2; }\n")
        output = directory / soname
        done = subprocess.run(
            [cc, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(output), str(source)],
            capture_output=True,
            check=False,
        )
        if done.returncode == 0:
            return output.read_bytes()
    return elf_bytes()


def _write(path: Path, content: str | bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    path.chmod(mode)


def build(entry: Entry, directory: Path) -> list[Path]:
    """The entry's packages, built with dpkg-deb in `directory`, in install order."""
    dpkg_deb = require_tool("dpkg-deb")
    built = []
    for package in entry.packages:
        tree = directory / entry.id / package.name
        if tree.exists():
            shutil.rmtree(tree)
        _write(tree / "DEBIAN/control", package.control_file(), 0o644)
        for name, content in package.control.items():
            mode = 0o755 if name in MAINTAINER_SCRIPTS else 0o644
            _write(tree / "DEBIAN" / name, content, mode)
        for path, content in package.files.items():
            if content == SHARED_LIBRARY:
                content = shared_library(directory, path.rpartition("/")[2])
            executable = isinstance(content, str) and content.startswith("#!")
            _write(tree / path, content, 0o755 if executable else 0o644)
        for path, target in package.links.items():
            link = tree / path
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(target)
        output = directory / entry.id / f"{package.name}_{package.version}_all.deb"
        subprocess.run(
            [
                dpkg_deb,
                "--root-owner-group",
                "--nocheck",
                "-Zgzip",
                "-z1",
                "--build",
                str(tree),
                str(output),
            ],
            check=True,
            capture_output=True,
        )
        built.append(output)
    return built


def corpus(directory: Path) -> dict[str, list[Path]]:
    """Every entry built: id -> its .deb files in install order."""
    return {entry.id: build(entry, directory) for entry in ENTRIES}
