"""Audit rules: does a package carry a kernel payload? Pure: DebContents in, findings out.

The promise is that the in-tree amdxdna driver stays alone: no kernel module, DKMS tree,
firmware, module-loading configuration, or maintainer script that loads or builds modules.
The verdict is built from what is known to be harmless, never from a list of what is bad:
debs/admission.py admits payload paths by the stack's layout, control members and
relations by the stack's names, and maintainer scripts only as a known generator's output;
everything else blocks, whatever it is called. The content rules below (modules by their
ELF sections, DKMS trees, module configuration, loader hooks, devices, links into kernel
trees) stay as defence in depth and give the precise evidence where they match.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from xdnaforge.debs import admission, admit, host_rules
from xdnaforge.debs.debfile import DebContents, Entry
from xdnaforge.debs.host_rules import HostPaths
from xdnaforge.debs.policy import Policy

BLOCK = "block"
WARN = "warn"


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: str
    title: str
    fix: str = ""  # what a packager does about it


_ADMIT_FIX = (
    "if the file belongs to the stack, admit it in the recipe with a reason "
    "(audit.admit: [{path: PATTERN, reason: WHY}]); otherwise leave it out of the package"
)
_SCRIPT_FIX = (
    "build the package so its scripts are generator output (debhelper, dh_python3, XRT's "
    "CPack; docs/generators.md), or waive this exact script in the recipe (audit.scripts: "
    "package, script, sha256, justification) after reading it"
)
_KERNEL_FIX = (
    "build with -nokmod and without the driver's DKMS and firmware parts; the kernel's "
    "in-tree amdxdna is the driver"
)


RULES = {
    rule.id: rule
    for rule in (
        Rule("PATH-001", BLOCK, "a payload path the stack's layout does not admit", _ADMIT_FIX),
        Rule(
            "PATH-002",
            BLOCK,
            "a path that symlinks (the packages' or merged-/usr's) land outside the layout",
            "ship the file at the path it lands on, or drop the directory symlink",
        ),
        Rule(
            "PATH-003",
            BLOCK,
            "a path with characters outside the portable set (shell or terminal syntax)",
            "rename the file to letters, digits and ._+@~,:=%-",
        ),
        Rule(
            "PATH-004",
            BLOCK,
            "a set-user-id or set-group-id file (it runs as its owner for whoever runs it)",
            "drop the set-id bits: the stack's programs run as the user who starts them",
        ),
        Rule(
            "CTRL-001",
            BLOCK,
            "a control member dpkg and debhelper do not write",
            "remove it from DEBIAN/: dpkg installs it under var/lib/dpkg/info/",
        ),
        Rule("CTRL-002", BLOCK, "a conffile outside the stack's layout", _ADMIT_FIX),
        Rule("KMOD-001", BLOCK, "kernel module file (*.ko, *.ko.gz|xz|zst)"),
        Rule("KMOD-002", BLOCK, "file under lib/modules or usr/lib/modules"),
        Rule("KMOD-003", BLOCK, "kernel image, initrd or System.map under boot/"),
        Rule(
            "KMOD-004",
            BLOCK,
            "module loading configuration (modprobe.d, modules-load.d, depmod.d, etc/modules)",
        ),
        Rule("KMOD-005", BLOCK, "a kernel module recognised by its content (any name)"),
        Rule(
            "KMOD-006",
            BLOCK,
            "a symlink into a kernel tree (modules, firmware, boot, config) or to a module tool",
        ),
        Rule("LOAD-001", BLOCK, "runs commands as root at boot, kernel install or initramfs build"),
        Rule("LOAD-002", BLOCK, "a systemd unit, udev rule or apt hook that runs commands"),
        Rule("DEV-001", BLOCK, "a device node, or device access for everyone"),
        Rule("DKMS-001", BLOCK, "DKMS configuration (dkms.conf)"),
        Rule("DKMS-002", BLOCK, "DKMS installer script (dkms_driver.sh)"),
        Rule("DKMS-003", BLOCK, "kernel module sources under usr/src (Kbuild, obj-m, module code)"),
        Rule("SRC-001", WARN, "file under usr/src that is not a kernel module tree"),
        Rule("FW-001", BLOCK, "firmware under lib/firmware or usr/lib/firmware"),
        Rule("SCRIPT-001", BLOCK, "maintainer script runs a module or initramfs tool"),
        Rule("SCRIPT-002", BLOCK, "maintainer script writes udev rules"),
        Rule("SCRIPT-003", BLOCK, "maintainer script changes initramfs configuration"),
        Rule(
            "SCRIPT-004",
            BLOCK,
            "maintainer script that is not a known generator's output",
            _SCRIPT_FIX,
        ),
        Rule("UDEV-001", BLOCK, "udev rule giving everyone access (MODE with the o+w bit)"),
        Rule("DEP-001", BLOCK, "depends on dkms, a *-dkms package, firmware or a kernel package"),
        Rule("DEP-002", BLOCK, "recommends one (apt installs Recommends by default)"),
        Rule(
            "DEP-003",
            BLOCK,
            "replaces, breaks, conflicts with or provides a package outside the stack",
            "relations of that kind may name only the stack's own packages; waive DEP-003 for "
            "this package in audit.waivers with a justification if it must",
        ),
        Rule(
            "OBSERVE-001",
            BLOCK,
            "installed in a throw-away root, its scripts ran a module tool",
            _KERNEL_FIX,
        ),
        Rule(
            "OBSERVE-002",
            BLOCK,
            "installed in a throw-away root, it left a file outside the stack's layout",
            _ADMIT_FIX,
        ),
        Rule(
            "OBSERVE-003",
            BLOCK,
            "it could not be installed in a throw-away root: what its scripts do is unknown",
            "install it by hand into a scratch root (dpkg --root) to see why its scripts fail",
        ),
        Rule("AUDIT-001", BLOCK, "a file too large for the rules to judge whole"),
        *(Rule(rule_id, WARN, title) for rule_id, title in host_rules.RULES),
    )
}

# commands whose use in a maintainer script loads, builds or removes kernel modules
MODULE_TOOLS = frozenset(
    {
        "dkms",
        "modprobe",
        "insmod",
        "rmmod",
        "depmod",
        "update-initramfs",
        "dracut",
        "mkinitramfs",
        "mkinitcpio",
        "dkms_driver.sh",
    }
)
_LINKED_TOOLS = MODULE_TOOLS | {"kmod"}  # kmod is what modprobe, insmod ... link to
_KO_RE = re.compile(r"\.ko(\.(gz|xz|zst))?$")
_UDEV_PATH_RE = re.compile(r"(/etc|/lib|/usr/lib|/run)/udev/rules\.d\b")
_WRITE_RE = re.compile(r"(>>?|\btee\b|\bcp\b|\binstall\b|\bln\b|\bmv\b|\bsed\s+-i)")
_MODULE_SOURCE_RE = re.compile(
    r"^\s*(MODULE_LICENSE\s*\(|module_init\s*\(|#\s*include\s*<linux/module\.h>)", re.MULTILINE
)
_OBJ_M_RE = re.compile(r"^\s*obj-(m|y|\$\([A-Za-z0-9_]+\))\s*[:+]?=", re.MULTILINE)
_COMMAND_PREFIXES = frozenset(
    {
        "sudo",
        "exec",
        "command",
        "nohup",
        "then",
        "do",
        "else",
        "if",
        "elif",
        "while",
        "until",
        "!",
        "time",
        "{",
        "(",
        "env",
    }
)


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: str  # block, warn, or "waived" when a waiver covers it
    package: str
    path: str
    evidence: str
    waiver: str | None = None  # the justification, when waived


@dataclass(frozen=True, slots=True)
class Verdict:
    file: str
    package: str
    version: str
    architecture: str
    size: int
    sha256: str
    findings: tuple[Finding, ...]
    # what installing it in a throw-away root showed: "observed", "not run: WHY", or
    # "not needed" (no maintainer scripts: dpkg only unpacks the admitted files)
    observation: str = "not needed"

    @property
    def verdict(self) -> str:
        return "block" if any(f.severity == BLOCK for f in self.findings) else "pass"


def _name(path: str) -> str:
    """The last path component (paths are normalised by debfile: no "." or empty parts)."""
    return path.rpartition("/")[2]


def wants_text(path: str) -> bool:
    """Data files whose content the rules read (passed to debfile.read_deb)."""
    name = _name(path)
    if _UDEV_TREE.holds(path) or _UNIT_TREE.holds(path) or _TMPFILES_TREE.holds(path):
        return True
    if _APT_HOOKS.holds(path) or host_rules.wants_text(path):
        return True
    return path.startswith("usr/src/") and (
        name in ("Makefile", "Kbuild", "dkms.conf") or name.endswith((".c", ".h", ".mk"))
    )


class _Tree:
    """Paths under any of some directories, or those directories themselves; a kernel
    package's every entry is checked against each tree, so the test is two C calls."""

    __slots__ = ("bare", "prefixes")

    def __init__(self, *prefixes: str) -> None:
        self.prefixes = prefixes
        self.bare = frozenset(p.rstrip("/") for p in prefixes)

    def holds(self, path: str) -> bool:
        return path.startswith(self.prefixes) or path in self.bare


# The directories each tool reads, from its own configuration paths: libkmod's
# default_config_paths (libkmod/libkmod-config.c) and systemd's CONF_PATHS ("etc", "run",
# "usr/local/lib", "usr/lib", and "lib" for split-/usr systems).
_CONF_ROOTS = ("etc/", "run/", "usr/local/lib/", "usr/lib/", "lib/")


def _under(*directories: str) -> tuple[str, ...]:
    return tuple(f"{root}{directory}/" for root in _CONF_ROOTS for directory in directories)


_MODULE_TREE = _Tree("lib/modules/", "usr/lib/modules/")
_MODPROBE_CONFIG = _Tree(
    *_under("modprobe.d", "modules-load.d", "depmod.d"),
    "etc/modules",  # Debian's kmod: modules loaded at boot
    "etc/modprobe.conf",
    "etc/sysconfig/modules/",
)
_FIRMWARE_TREE = _Tree("lib/firmware/", "usr/lib/firmware/", "usr/local/lib/firmware/")
# run as root when the system boots, a kernel is installed or an initramfs is built
_LOADER_TREE = _Tree(
    *_under("systemd/system-generators", "systemd/user-generators", "systemd/system-shutdown"),
    *_under("kernel/install.d"),
    "etc/kernel/",  # postinst.d, preinst.d, postrm.d, prerm.d, header_postinst.d
    "etc/initramfs-tools/",
    "usr/share/initramfs-tools/",
    "etc/dracut.conf",
    "etc/dracut.conf.d/",
    "usr/lib/dracut/",
    "lib/dracut/",
    "etc/crontab",
    "etc/cron.d/",
    "etc/cron.hourly/",
    "etc/cron.daily/",
    "etc/cron.weekly/",
    "etc/cron.monthly/",
    "etc/cron.yearly/",
    "var/spool/cron/",
    "etc/rc.local",
    "etc/init.d/",
    "etc/rcS.d/",
    "etc/network/if-up.d/",
    "etc/NetworkManager/dispatcher.d/",
    "etc/X11/Xsession.d/",
    "etc/profile.d/",
    "etc/ld.so.preload",
)
_UDEV_TREE = _Tree(*_under("udev/rules.d"))
_UNIT_TREE = _Tree(*_under("systemd/system", "systemd/user", "systemd/network"))
_TMPFILES_TREE = _Tree(*_under("tmpfiles.d"))
_APT_HOOKS = _Tree("etc/apt/apt.conf.d/", "etc/apt/apt.conf", "usr/share/apt/apt.conf.d/")
_KERNEL_TREES = (_MODULE_TREE, _MODPROBE_CONFIG, _FIRMWARE_TREE, _LOADER_TREE, _UDEV_TREE)
_UNIT_EXEC_RE = re.compile(r"^\s*Exec[A-Za-z]*\s*=\s*(.*)$", re.MULTILINE)
_UDEV_RUN_RE = re.compile(r"\b(RUN|PROGRAM|IMPORT\{program\})\s*\+?=")
_UDEV_MODE_RE = re.compile(r"\bMODE\s*[:+]?=\s*\"?\s*([0-7]+)")
_APT_HOOK_RE = re.compile(r"(Pre|Post)-Invoke|Pre-Install-Pkgs|Post-Invoke-Success", re.I)
_MODULE_WORDS_RE = re.compile(
    r"(^|[/\s'\"=;|&(])(" + "|".join(re.escape(t) for t in sorted(MODULE_TOOLS)) + r")\b"
    r"|modprobe@|systemd-modules-load|kmod\b|/lib/modules|modules_install"
)


def kernel_tree(path: str) -> str | None:
    """Which kernel tree a package path (no leading "/") is in, if any."""
    for tree, what in (
        (_MODULE_TREE, "the kernel's module tree"),
        (_MODPROBE_CONFIG, "module loading configuration"),
        (_FIRMWARE_TREE, "the firmware tree"),
        (_LOADER_TREE, "run as root at boot or kernel install"),
        (_UDEV_TREE, "udev rules"),
        (_UNIT_TREE, "systemd units"),
        (_TMPFILES_TREE, "tmpfiles.d"),
        (_APT_HOOKS, "apt configuration"),
    ):
        if tree.holds(path):
            return what
    if path.startswith("boot/"):
        return "the kernel's boot files"
    return None


def _data_findings(deb: DebContents) -> Iterable[tuple[str, str, str]]:
    """(rule, path, evidence) for the data files."""
    for path, size in sorted(deb.oversized.items()):
        yield "AUDIT-001", path, f"{size} bytes: what follows the first MiB would pass unread"
    for path, content in sorted(deb.modules.items()):
        yield "KMOD-005", path, content
    for path, why in sorted(deb.unjudged.items()):
        yield "AUDIT-001", path, why
    src_trees: dict[str, list[str]] = {}
    for entry in deb.entries:
        path, name = entry.path, _name(entry.path)
        if entry.kind == "dir":
            if entry.mode & 0o002 and not entry.mode & 0o1000:
                yield "DEV-001", path, f"a world-writable directory (mode {entry.mode:04o})"
            continue
        yield from _loader_findings(deb, entry)
        if _KO_RE.search(name):
            yield "KMOD-001", path, f"{entry.kind}, {entry.size} bytes"
        if _MODULE_TREE.holds(path):
            yield "KMOD-002", path, f"{entry.kind} under the kernel's module tree"
        if path.startswith("boot/") and name.startswith(
            ("vmlinuz", "vmlinux", "initrd", "System.map", "config-")
        ):
            yield "KMOD-003", path, f"{entry.kind}, {entry.size} bytes"
        if _MODPROBE_CONFIG.holds(path):
            yield "KMOD-004", path, "changes which kernel modules load and how"
        if name == "dkms.conf":
            first = _first_line(deb.texts.get(path, ""), "PACKAGE_NAME")
            yield "DKMS-001", path, first or "dkms.conf"
        if name == "dkms_driver.sh":
            yield "DKMS-002", path, "upstream's DKMS installer, run from the plugin's postinst"
        if _FIRMWARE_TREE.holds(path):
            yield "FW-001", path, f"{entry.kind}, {entry.size} bytes"
        if path.startswith("usr/src/") and path.count("/") >= 1:
            parts = path.split("/")
            tree = "/".join(parts[:3]) if len(parts) > 3 else path
            src_trees.setdefault(tree, []).append(path)
    for tree, files in sorted(src_trees.items()):
        evidence = _module_evidence(deb, files)
        if evidence:
            yield "DKMS-003", evidence[0], evidence[1]
        elif not any(PurePosixPath(f).name == "dkms.conf" for f in files):
            yield (
                "SRC-001",
                files[0],
                (
                    f"{len(files)} file(s) under {tree}; no kernel build files (a leftover, not a "
                    "module tree)"
                ),
            )


def _loader_findings(deb: DebContents, entry: Entry) -> Iterable[tuple[str, str, str]]:
    """Devices, links into kernel trees, and module loading shipped as data."""
    path = entry.path
    if entry.kind in ("chardev", "blockdev"):
        yield "DEV-001", path, f"a {entry.kind} node (mode {entry.mode:04o}): direct kernel access"
    elif entry.kind == "file" and entry.mode & 0o002:
        yield "DEV-001", path, f"a world-writable file (mode {entry.mode:04o})"
    if _LOADER_TREE.holds(path):
        yield "LOAD-001", path, f"{entry.kind}: {kernel_tree(path)}"
    text = deb.texts.get(path, "")
    if _UDEV_TREE.holds(path):
        if entry.kind != "file":
            yield "LOAD-002", path, f"a udev rules {entry.kind}: its content is not judged"
        for line in _live_lines(text):
            if _UDEV_RUN_RE.search(line):
                yield "LOAD-002", path, line
            mode = _UDEV_MODE_RE.search(line)
            if mode and int(mode[1], 8) & 0o002:
                yield "UDEV-001", path, line
    elif _UNIT_TREE.holds(path):
        if entry.kind == "symlink" and _name(path).startswith(("modprobe@", "systemd-modules")):
            yield "LOAD-002", path, f"-> {entry.link}"
        for line in _live_lines(text):
            if _MODULE_WORDS_RE.search(line):
                yield "LOAD-002", path, line
    elif _TMPFILES_TREE.holds(path):
        for line in _live_lines(text):
            fields = line.split()
            world = len(fields) > 2 and re.fullmatch(r"~?[0-7]{3,4}", fields[2])
            open_device = world and int(fields[2].lstrip("~"), 8) & 0o002
            if (open_device and fields[1].startswith("/dev")) or (
                fields and fields[0].rstrip("!+-=~^").lower() in ("c", "b")
            ):
                yield "DEV-001", path, line
    elif _APT_HOOKS.holds(path):
        for line in _live_lines(text):
            if _APT_HOOK_RE.search(line):
                yield "LOAD-002", path, line


def _live_lines(text: str) -> Iterable[str]:
    """Lines that are not comments (udev, systemd, tmpfiles.d and apt all use "#")."""
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", "//", ";")):
            yield line


def _module_evidence(deb: DebContents, files: Sequence[str]) -> tuple[str, str] | None:
    for path in files:
        name = PurePosixPath(path).name
        text = deb.texts.get(path, "")
        if name == "Kbuild":
            return path, "Kbuild file (kernel module build)"
        if name == "Makefile":
            line = _matching_line(text, _OBJ_M_RE)
            if line:
                return path, line
        if name.endswith(".c"):
            line = _matching_line(text, _MODULE_SOURCE_RE)
            if line:
                return path, line
    return None


def _first_line(text: str, needle: str) -> str | None:
    return next((line.strip() for line in text.splitlines() if needle in line), None)


def _matching_line(text: str, pattern: re.Pattern[str]) -> str | None:
    for line in text.splitlines():
        if pattern.search(line):
            return line.strip()
    return None


def _commands(line: str) -> Iterable[str]:
    """Program names of the simple commands on a shell line (best effort, no expansion)."""
    for part in re.split(r"&&|\|\||[;|&`]|\$\(", line):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            words = part.split()
        for word in words:
            if word in _COMMAND_PREFIXES or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
                continue
            yield PurePosixPath(word).name
            break


def _script_findings(deb: DebContents) -> Iterable[tuple[str, str, str]]:
    """The precise evidence (SCRIPT-001..003, UDEV-001) where a line plainly runs a module
    tool or writes udev or initramfs configuration; admission.script_findings blocks every
    script that is not a known generator's output (SCRIPT-004) whether or not it matches."""
    for script, text in sorted(deb.scripts.items()):
        yield from _pattern_findings(script, f"DEBIAN/{script}", text)


def _pattern_findings(script: str, where: str, text: str) -> Iterable[tuple[str, str, str]]:
    """Lines that plainly run a module tool or write udev or initramfs configuration."""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if script == "triggers":
            # "activate-noawait update-initramfs": runs the tool through dpkg triggers
            words = line.split()
            if len(words) > 1 and words[1] in MODULE_TOOLS:
                yield "SCRIPT-001", where, line
            continue
        tools = sorted(set(_commands(line)) & MODULE_TOOLS)
        if tools or "/usr/lib/dkms/" in line:
            yield "SCRIPT-001", where, line
        if _UDEV_PATH_RE.search(line) and _WRITE_RE.search(line):
            yield "SCRIPT-002", where, line
        elif (mode := _UDEV_MODE_RE.search(line)) and int(mode[1], 8) & 0o002:
            yield "UDEV-001", where, line
        if re.search(r"/etc/(dracut\.conf\.d|initramfs-tools)\b", line) and _WRITE_RE.search(line):
            yield "SCRIPT-003", where, line


def symlinks(debs: Iterable[DebContents]) -> dict[str, str]:
    """Every symlink of the packages installed together: path -> target."""
    return {e.path: e.link for deb in debs for e in deb.entries if e.kind == "symlink" and e.link}


def _in_kernel_tree(path: str) -> bool:
    return any(tree.holds(path) for tree in _KERNEL_TREES) or path.startswith("boot/")


def _together_findings(deb: DebContents, links: dict[str, str]) -> Iterable[tuple[str, str, str]]:
    """Files that a directory symlink (this package's, another's or the target's merged-/usr
    links) puts into a kernel tree, and links whose target is one, followed physically
    (`bin/..` is `usr` on a merged-/usr target) on a merged and on a split /usr."""
    for entry in deb.entries:
        if entry.kind == "dir" or "/" not in entry.path:
            continue
        if entry.kind == "symlink" and entry.link and not _MODULE_TREE.holds(entry.path):
            for where in admit.link_targets(entry.path, entry.link, links):
                if where is not None and _in_kernel_tree(where):
                    yield "KMOD-006", entry.path, f"-> {entry.link} ({kernel_tree(where)})"
                    break
                if where is not None and _name(where) in _LINKED_TOOLS:
                    # `usr/bin/xrt-smi -> /usr/sbin/modprobe`: root running the stack's
                    # program would run the module tool
                    yield "KMOD-006", entry.path, f"-> {entry.link} (a module tool)"
                    break
        for landed in admit.landings(entry.path, links):
            if (
                landed is not None
                and landed != entry.path
                and _in_kernel_tree(landed)
                and not _in_kernel_tree(entry.path)
            ):
                yield (
                    "KMOD-006",
                    entry.path,
                    f"lands in {landed} ({kernel_tree(landed)}) through symlinks",
                )
                break


def audit(
    deb: DebContents,
    policy: Policy | None = None,
    host: HostPaths | None = None,
    links: dict[str, str] | None = None,
    together: Sequence[str] = (),
) -> Verdict:
    """The findings; `policy` is the recipe's (debs/policy.py); `host` names the build's
    directories for the contamination rules; `links` the symlinks of all packages installed
    together (symlinks() of them) and `together` their names."""
    policy = policy or Policy()
    links = links if links is not None else symlinks([deb])
    found = [
        *admission.path_findings(deb, policy, links),
        *admission.control_findings(deb, policy),
        *admission.script_findings(deb),
        *admission.relation_findings(deb, policy, together),
        *_data_findings(deb),
        *_together_findings(deb, links),
        *_script_findings(deb),
        *host_rules.host_findings(deb, host or host_rules.host_paths()),
    ]
    package = deb.package
    findings = [_finding(deb, policy, *item) for item in dict.fromkeys(found)]
    return Verdict(
        file=deb.file,
        package=package,
        version=deb.control.get("Version", ""),
        architecture=deb.control.get("Architecture", ""),
        size=deb.size,
        sha256=deb.sha256,
        findings=tuple(sorted(findings, key=lambda f: (f.severity != BLOCK, f.rule, f.path))),
    )


def _finding(deb: DebContents, policy: Policy, rule_id: str, path: str, evidence: str) -> Finding:
    """One finding, waived where the recipe says so: a rule for this package, or (for
    SCRIPT-004) this exact script by its sha256."""
    rule = RULES[rule_id]
    package = deb.package
    justification = None
    waiver = policy.waiver(rule_id, package)
    if waiver is not None:
        justification = waiver.justification
    elif rule_id == "SCRIPT-004":
        script = path.removeprefix("DEBIAN/")
        digest = deb.script_digests.get(script, "")
        by_digest = policy.script_waiver(package, script, digest)
        if by_digest is not None:
            justification = f"sha256 {digest}: {by_digest.justification}"
    return Finding(
        rule=rule_id,
        severity="waived" if justification is not None else rule.severity,
        package=package,
        path=path,
        evidence=evidence,
        waiver=justification,
    )


def with_findings(verdict: Verdict, extra: Sequence[Finding], observation: str) -> Verdict:
    """The verdict with what was observed when the packages were installed for real."""
    findings = (*verdict.findings, *extra)
    return replace(
        verdict,
        findings=tuple(sorted(findings, key=lambda f: (f.severity != BLOCK, f.rule, f.path))),
        observation=observation,
    )
