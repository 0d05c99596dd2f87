"""The audit's positive rules: what a package is admitted to carry, never what it must avoid.

- payload paths: every entry, where its text puts it and where dpkg writes it once the
  packages' own symlinks and the target's merged-/usr links are followed (both a merged and
  a split /usr), must be admitted by the stack's layout or the recipe (debs/admit.py), and
  be spelt in portable file name characters (a `$(...)` or a newline in a name is shell to
  dh_python3's generated prerm, and a terminal escape to anyone who reads a listing);
- control members: the ones dpkg and debhelper write (control, md5sums, conffiles, shlibs,
  symbols, triggers, templates and the maintainer scripts); any other member is installed
  by dpkg under var/lib/dpkg/info/, where nothing reviews it;
- conffiles: each names an admitted path;
- maintainer scripts and the triggers file: exactly a known generator's output
  (debs/generators.py), or waived by the recipe by their sha256 (applied in rules.audit);
- relations: Depends, Pre-Depends and Recommends on nothing of the kernel's (a `linux-*`
  package other than the userspace ones, dkms, a `*-dkms` package, firmware), and Replaces,
  Breaks, Conflicts and Provides only of the stack's own packages.

Each rule yields (rule, path, evidence). Pure: DebContents in, findings out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from xdnaforge.debs import admit, generators
from xdnaforge.debs.control import relation_names
from xdnaforge.debs.debfile import DebContents
from xdnaforge.debs.policy import Policy

CONTROL_MEMBERS = frozenset(
    {
        "control",
        "md5sums",
        "conffiles",
        "shlibs",
        "symbols",
        "triggers",
        "templates",
        "preinst",
        "postinst",
        "prerm",
        "postrm",
        "config",
    }
)
_ODD_NAME = "a name with characters outside [A-Za-z0-9._+@~,:=%-]"
SHOWN_LINE = 200  # characters of a script line in a finding
_PORTABLE = re.compile(r"[A-Za-z0-9._+@~,:=%-]+")
# the only linux-* packages that are userspace: the kernel's headers for libc, and the
# base scripts every Debian system has
USERSPACE_LINUX = frozenset({"linux-libc-dev", "linux-base"})
_KERNEL_NAME = re.compile(r"^(linux-.+|dkms|.+-dkms|.*firmware.*)$")
# the stack's own package names: ours and AMD's (xrt-*, xrt_plugin-amdxdna), Debian's and
# Ubuntu's (source package xrt: libxrt*, python3-xrt)
_STACK_NAME = re.compile(r"^(xrt([-_].+)?|libxrt.*|python3-(py)?xrt.*)$")


def kernel_package(name: str) -> bool:
    """A package of the kernel's: its images, headers, modules, DKMS, or firmware."""
    return name not in USERSPACE_LINUX and _KERNEL_NAME.match(name) is not None


def _kind(directory: bool) -> str:
    return "directory" if directory else "file"


def path_findings(
    deb: DebContents, policy: Policy, links: Mapping[str, str]
) -> Iterable[tuple[str, str, str]]:
    """PATH-001 (not admitted), PATH-002 (lands outside through links), PATH-003 (name),
    PATH-004 (a set-user-id or set-group-id file).
    A directory that is not admitted is named only when nothing named lies below it (the
    file under etc/modprobe.d/ is the finding, not etc/modprobe.d/ too)."""
    architecture = deb.control.get("Architecture", "")
    layout = admit.layout(deb.package, architecture, policy.admitted)
    found: list[tuple[str, str, str]] = []
    directories: list[tuple[str, str, str]] = []
    for entry in deb.entries:
        path = entry.path
        directory = entry.kind == "dir"
        into = directories if directory else found
        if not all(_PORTABLE.fullmatch(part) for part in path.split("/")):
            into.append(("PATH-003", path, f"{entry.kind}: {_ODD_NAME}"))
            continue
        if not layout.admits(path, directory):
            into.append(("PATH-001", path, f"{entry.kind}: outside the stack's layout"))
            continue
        if entry.kind in ("file", "hardlink") and entry.mode & 0o6000:
            # anyone who runs it runs it as its owner (root): a way to modprobe for everyone
            into.append(("PATH-004", path, f"{entry.kind} with mode {entry.mode:04o}"))
        for landed in dict.fromkeys(admit.landings(path, links)):
            if landed is None:
                into.append(("PATH-002", path, "its directories' symlinks loop"))
                break
            if landed != path and not layout.admits(landed, directory):
                into.append(("PATH-002", path, f"lands in {landed} through symlinks"))
                break
    named = [path for _, path, _ in found]
    yield from found
    for finding in directories:
        below = finding[1] + "/"
        if not any(path.startswith(below) for path in named):
            named.append(finding[1])
            yield finding


def control_findings(deb: DebContents, policy: Policy) -> Iterable[tuple[str, str, str]]:
    """CTRL-001 (a control member nothing reviews), CTRL-002 (a conffile not admitted)."""
    for name in deb.control_members:
        if name not in CONTROL_MEMBERS:
            yield "CTRL-001", f"DEBIAN/{name}", "installed under var/lib/dpkg/info/, unreviewed"
    architecture = deb.control.get("Architecture", "")
    layout = admit.layout(deb.package, architecture, policy.admitted)
    for line in deb.conffiles.splitlines():
        # "/etc/x" or "remove-on-upgrade /etc/x": the path is the last word
        words = line.split()
        if words and not layout.admits(words[-1].lstrip("/")):
            yield "CTRL-002", "DEBIAN/conffiles", line.strip()


def script_findings(deb: DebContents) -> Iterable[tuple[str, str, str]]:
    """SCRIPT-004: a maintainer script or triggers file that no known generator wrote."""
    version = deb.control.get("Version", "")
    architecture = deb.control.get("Architecture", "")
    for script, text in sorted(deb.scripts.items()):
        match = generators.match(script, text, deb.package, version, architecture)
        if match.known:
            continue
        where = f"DEBIAN/{script}"
        if match.unknown_line is None:
            yield "SCRIPT-004", where, "not a known generator's output"
        else:
            number, line = match.unknown_line
            shown = line.strip()
            if len(shown) > SHOWN_LINE:  # a hostile script's line can be a MiB long
                shown = f"{shown[:SHOWN_LINE]}... ({len(shown)} characters)"
            yield "SCRIPT-004", where, f"line {number}: {shown}: not a known generator's output"


def relation_findings(
    deb: DebContents, policy: Policy, together: Sequence[str] = ()
) -> Iterable[tuple[str, str, str]]:
    """DEP-001/002 (asks for a kernel package), DEP-003 (replaces, breaks, conflicts with or
    provides a package that is not the stack's)."""
    own = {*policy.stack, *together, deb.package}
    for field, rule in (
        ("Pre-Depends", "DEP-001"),
        ("Depends", "DEP-001"),
        ("Recommends", "DEP-002"),
    ):
        text = deb.control.get(field)
        if text and any(kernel_package(name) for name in relation_names(text)):
            yield rule, "DEBIAN/control", f"{field}: {text.strip()}"
    for field in ("Replaces", "Breaks", "Conflicts", "Provides"):
        text = deb.control.get(field)
        if not text:
            continue
        strangers = [
            name for name in relation_names(text) if name not in own and not _STACK_NAME.match(name)
        ]
        if strangers:
            yield "DEP-003", "DEBIAN/control", f"{field}: {', '.join(strangers)}"
