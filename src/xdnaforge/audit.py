"""Audit rules: does a package carry a kernel payload? Pure: DebContents in, findings out.

The promise is that the in-tree amdxdna driver stays alone: no kernel module, DKMS tree,
firmware, module-loading configuration, or maintainer script that loads or builds modules.
Rules are precise on purpose: a false block stops a legitimate install, so a lone header
under usr/src (real XRT packages ship one) or a dependency on libudev1 is not a payload.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from . import audit_host
from .audit_host import HostPaths
from .control import relation_names
from .debfile import DebContents

BLOCK = "block"
WARN = "warn"


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: str
    title: str


RULES = {
    rule.id: rule
    for rule in (
        Rule("KMOD-001", BLOCK, "kernel module file (*.ko, *.ko.gz|xz|zst)"),
        Rule("KMOD-002", BLOCK, "file under lib/modules or usr/lib/modules"),
        Rule("KMOD-003", BLOCK, "kernel image, initrd or System.map under boot/"),
        Rule("KMOD-004", BLOCK, "module loading configuration (modprobe.d, modules-load.d)"),
        Rule("DKMS-001", BLOCK, "DKMS configuration (dkms.conf)"),
        Rule("DKMS-002", BLOCK, "DKMS installer script (dkms_driver.sh)"),
        Rule("DKMS-003", BLOCK, "kernel module sources under usr/src (Kbuild, obj-m, module code)"),
        Rule("SRC-001", WARN, "file under usr/src that is not a kernel module tree"),
        Rule("FW-001", BLOCK, "firmware under lib/firmware or usr/lib/firmware"),
        Rule("SCRIPT-001", BLOCK, "maintainer script runs a module or initramfs tool"),
        Rule("SCRIPT-002", BLOCK, "maintainer script writes udev rules"),
        Rule("SCRIPT-003", BLOCK, "maintainer script changes initramfs configuration"),
        Rule("UDEV-001", BLOCK, 'udev rule giving everyone access (MODE="0666")'),
        Rule("DEP-001", BLOCK, "depends on dkms or kernel headers/images/modules"),
        Rule("DEP-002", WARN, "recommends dkms or kernel headers/images/modules"),
        Rule("AUDIT-001", BLOCK, "a file the rules read is over the 1 MiB they read: not judged"),
        *(Rule(rule_id, WARN, title) for rule_id, title in audit_host.RULES),
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
_KO_RE = re.compile(r"\.ko(\.(gz|xz|zst))?$")
_KERNEL_PACKAGE_RE = re.compile(r"^(dkms|linux-(headers|image|modules|kbuild)(-.*)?)$")
_UDEV_DIRS = ("etc/udev/rules.d/", "lib/udev/rules.d/", "usr/lib/udev/rules.d/")
_UDEV_PATH_RE = re.compile(r"(/etc|/lib|/usr/lib|/run)/udev/rules\.d\b")
_WRITE_RE = re.compile(r"(>>?|\btee\b|\bcp\b|\binstall\b|\bln\b|\bmv\b|\bsed\s+-i)")
_MODE_0666_RE = re.compile(r"MODE\s*[:+]?=\s*\"?0?666\"?")
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
class Waiver:
    rule: str
    package: str
    justification: str


@dataclass(frozen=True, slots=True)
class Verdict:
    file: str
    package: str
    version: str
    architecture: str
    size: int
    sha256: str
    findings: tuple[Finding, ...]

    @property
    def verdict(self) -> str:
        return "block" if any(f.severity == BLOCK for f in self.findings) else "pass"


def _name(path: str) -> str:
    """The last path component (paths are normalised by debfile: no "." or empty parts)."""
    return path.rpartition("/")[2]


def wants_text(path: str) -> bool:
    """Data files whose content the rules read (passed to debfile.read_deb)."""
    name = _name(path)
    if (path.startswith(_UDEV_DIRS) and name.endswith(".rules")) or audit_host.wants_text(path):
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


_MODULE_TREE = _Tree("lib/modules/", "usr/lib/modules/")
_MODPROBE_CONFIG = _Tree(
    "etc/modprobe.d/",
    "lib/modprobe.d/",
    "usr/lib/modprobe.d/",
    "etc/modules-load.d/",
    "usr/lib/modules-load.d/",
    "lib/modules-load.d/",
)
_FIRMWARE_TREE = _Tree("lib/firmware/", "usr/lib/firmware/")


def _data_findings(deb: DebContents) -> Iterable[tuple[str, str, str]]:
    """(rule, path, evidence) for the data files."""
    for path, size in sorted(deb.oversized.items()):
        yield "AUDIT-001", path, f"{size} bytes: what follows the first MiB would pass unread"
    src_trees: dict[str, list[str]] = {}
    for entry in deb.entries:
        path, name = entry.path, _name(entry.path)
        if entry.kind == "dir":
            continue
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
        if path.startswith(_UDEV_DIRS) and name.endswith(".rules"):
            rule_line = _matching_line(deb.texts.get(path, ""), _MODE_0666_RE)
            if rule_line:
                yield "UDEV-001", path, rule_line
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
    for script, text in sorted(deb.scripts.items()):
        where = f"DEBIAN/{script}"
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
            elif _MODE_0666_RE.search(line):
                yield "UDEV-001", where, line
            if re.search(r"/etc/(dracut\.conf\.d|initramfs-tools)\b", line) and _WRITE_RE.search(
                line
            ):
                yield "SCRIPT-003", where, line


def _relation_findings(deb: DebContents) -> Iterable[tuple[str, str, str]]:
    for field, rule in (
        ("Pre-Depends", "DEP-001"),
        ("Depends", "DEP-001"),
        ("Recommends", "DEP-002"),
    ):
        text = deb.control.get(field)
        if not text:
            continue
        if any(_KERNEL_PACKAGE_RE.match(name) for name in relation_names(text)):
            yield rule, "DEBIAN/control", f"{field}: {text.strip()}"


def audit(
    deb: DebContents, waivers: Sequence[Waiver] = (), host: HostPaths | None = None
) -> Verdict:
    """The findings; `host` names the build's directories for the contamination rules."""
    found = [
        *_data_findings(deb),
        *_script_findings(deb),
        *_relation_findings(deb),
        *audit_host.host_findings(deb, host or audit_host.host_paths()),
    ]
    findings = []
    package = deb.package
    for rule_id, path, evidence in found:
        rule = RULES[rule_id]
        waiver = next((w for w in waivers if w.rule == rule_id and w.package == package), None)
        findings.append(
            Finding(
                rule=rule_id,
                severity="waived" if waiver else rule.severity,
                package=package,
                path=path,
                evidence=evidence,
                waiver=waiver.justification if waiver else None,
            )
        )
    return Verdict(
        file=deb.file,
        package=package,
        version=deb.control.get("Version", ""),
        architecture=deb.control.get("Architecture", ""),
        size=deb.size,
        sha256=deb.sha256,
        findings=tuple(sorted(findings, key=lambda f: (f.severity != BLOCK, f.rule, f.path))),
    )


def finding_record(finding: Finding) -> dict[str, str | None]:
    return {
        "rule": finding.rule,
        "severity": finding.severity,
        "path": finding.path,
        "evidence": finding.evidence,
        "waiver": finding.waiver,
    }


def audit_body(verdicts: Sequence[Verdict], errors: Sequence[tuple[str, str]]) -> dict[str, object]:
    """The audit record's content (audit.json, or --json for any files)."""
    blocked = [v for v in verdicts if v.verdict == BLOCK]
    overall = "error" if errors else ("block" if blocked else "pass")
    return {
        "verdict": overall,
        "packages": [
            {
                "file": v.file,
                "package": v.package,
                "version": v.version,
                "architecture": v.architecture,
                "size": v.size,
                "sha256": v.sha256,
                "verdict": v.verdict,
                "findings": [finding_record(f) for f in v.findings],
            }
            for v in verdicts
        ],
        "errors": [{"file": file, "reason": reason} for file, reason in errors],
        "rules": {r.id: {"severity": r.severity, "title": r.title} for r in RULES.values()},
    }


def format_verdicts(
    verdicts: Sequence[Verdict], errors: Sequence[tuple[str, str]], shown_per_rule: int = 3
) -> str:
    lines = []
    for verdict in verdicts:
        name = PurePosixPath(verdict.file).name
        lines.append(f"{verdict.verdict.upper():5} {verdict.package} {verdict.version} ({name})")
        per_rule: dict[str, int] = {}
        for finding in verdict.findings:
            per_rule[finding.rule] = per_rule.get(finding.rule, 0) + 1
            count = per_rule[finding.rule]
            if count <= shown_per_rule:
                waived = f" (waived: {finding.waiver})" if finding.waiver else ""
                lines.append(
                    f"      {finding.rule} {finding.severity}: {finding.path}: "
                    f"{finding.evidence}{waived}"
                )
        for rule, count in sorted(per_rule.items()):
            if count > shown_per_rule:
                lines.append(f"      {rule}: {count - shown_per_rule} more like these")
    for file, reason in errors:
        lines.append(f"ERROR {file}: {reason}")
    blocked = sum(1 for v in verdicts if v.verdict == BLOCK)
    total = len(verdicts) + len(errors)
    if errors:
        lines.append(f"audit failed: {len(errors)} of {total} file(s) could not be read")
    elif blocked:
        lines.append(f"audit: {blocked} of {total} package(s) carry a kernel payload: BLOCKED")
    else:
        lines.append(f"audit: {total} package(s), no kernel payload: PASS")
    return "\n".join(lines)
