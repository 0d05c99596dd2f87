"""The hostile corpus (tests/hostile.py) against the audit.

Every hostile entry must be blocked, each block naming its file or script line, its rule and
its evidence, and the benign controls must pass: one test lists every entry the audit passes
(the work queue). Whatever the audit passes is installed with the real dpkg (`dpkg
--force-depends -i`, an entry's packages in order) into a throw-away merged-/usr root built
on test_audit_parity's dpkg_root(): real coreutils, bash and dpkg inside, stand-ins for the
module tools and for the other tools debhelper's snippets run, which only log. dpkg runs with
that root as / in bubblewrap (a user namespace, no /proc, /sys or host path), not as `dpkg
--root`, which resolves a package's absolute symlinks on the real host (`opt/x -> /etc`
and a file under it wrote into the host's /etc). The install must show nothing: no module
tool run, no file outside the admitted prefixes, no kernel module on disk, no trigger
interest or kernel relation. A third test installs every hostile entry and checks that it
does what it says, so that the corpus stays real."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import zstandard

from tests import hostile
from tests.conftest import FIGURES, require_tool
from tests.integration.test_audit_parity import _libraries, dpkg_root, needs_root
from xdnaforge.debs.rules import RULES, Finding
from xdnaforge.stages.audit import audit_files

pytestmark = pytest.mark.tools("dpkg", "dpkg-deb", "bwrap")

# the stack's layout, for now (the paths an XRT package may install); var/lib/dpkg/ is dpkg's
ADMITTED = (
    re.compile(r"opt/xilinx/.*"),
    re.compile(r"usr/lib/[a-z0-9_]+-linux-gnu[a-z0-9_]*/libxrt[^/]*"),
    re.compile(r"var/lib/dpkg/.*"),
)
OUR_LOGS = frozenset({"tmp/module-tools", "tmp/tools-run", "var/log/dpkg.log"})
SANDBOX = ("dev", ".debs")  # bubblewrap's mount points
# copied from the host, so maintainer scripts do what they say (bash for the bash entries)
REAL_TOOLS = (
    *("bash", "cp", "ln", "mv", "rm", "mkdir", "rmdir", "chmod", "chown", "touch", "install"),
    *("cat", "grep", "dpkg", "dpkg-deb", "dpkg-split", "tar", "diff"),
)
# what debhelper's and CPack's snippets run besides those: stand-ins that only log, so a
# handed-over file is shown (the harm of `systemd-tmpfiles --create FILE` is in FILE)
STAND_INS = (
    *("ldconfig", "dpkg-trigger", "dpkg-maintscript-helper", "dpkg-query"),
    *("deb-systemd-helper", "deb-systemd-invoke", "systemctl", "invoke-rc.d", "update-rc.d"),
    *("update-alternatives", "py3compile", "py3clean", "pycompile", "pyclean", "python3"),
    *("systemd-tmpfiles", "systemd-sysusers", "adduser", "addgroup", "useradd", "groupadd"),
    *("usermod", "getent", "which", "install-info", "start-stop-daemon"),
)
# directories a Debian or Ubuntu host has, which globs and directory symlinks rely on
SKELETON = (
    "etc/modprobe.d",
    "etc/modules-load.d",
    "etc/systemd/system",
    "usr/lib/modprobe.d",
    "usr/lib/firmware",
    "usr/lib/python3/dist-packages",
    "usr/local/lib/modprobe.d",
    "usr/local/lib/systemd/system",
)
RELATIONS = ("Pre-Depends", "Depends", "Recommends", "Provides", "Conflicts", "Breaks", "Replaces")
_KERNEL_NAME = re.compile(r"(linux-.*|dkms|.*-dkms)\Z")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    return hostile.corpus(tmp_path_factory.mktemp("hostile"))


# ---- the audit's reading: the one place to adapt when audit_files changes ----


@dataclass(frozen=True)
class Judged:
    blocks: list[Finding]
    errors: list[tuple[str, str]]

    @property
    def refused(self) -> bool:
        return bool(self.blocks or self.errors)


def judge(files: Sequence[Path]) -> Judged:
    verdicts, errors = audit_files(files)
    blocks = [f for v in verdicts for f in v.findings if f.severity == "block"]
    return Judged(blocks, errors)


def unexplained(finding: Finding) -> str | None:
    """What a block lacks of its place (file or script line), its rule and its hint."""
    hint = getattr(finding, "hint", None) or RULES.get(finding.rule, None)
    if not re.fullmatch(r"[A-Z]+-[0-9]{3}", finding.rule) or hint is None:
        return f"rule {finding.rule!r} is no rule with a hint"
    if not finding.path:
        return "no file or script named"
    if not finding.evidence:
        return "no evidence (the line or what was found)"
    return None


def test_every_hostile_entry_is_blocked_and_the_benign_ones_pass(
    built: dict[str, list[Path]], record_property: Callable[[str, object], None]
) -> None:
    passed, unexplained_blocks, benign_blocked = [], [], []
    for entry in hostile.ENTRIES:
        judged = judge(built[entry.id])
        if entry.benign:
            if judged.refused:
                benign_blocked.append(f"{entry.id}: {judged.blocks or judged.errors}")
            continue
        if not judged.refused:
            passed.append(entry)
        for finding in judged.blocks:
            missing = unexplained(finding)
            if missing:
                unexplained_blocks.append(f"{entry.id}: {finding.rule} {finding.path}: {missing}")
    table = "\n".join(f"  {e.id} [{e.kind}]: {e.does}; shows {', '.join(e.shows)}" for e in passed)
    record_property(
        FIGURES,
        f"{len(passed)} of {sum(not e.benign for e in hostile.ENTRIES)} hostile entries pass "
        f"the audit: {' '.join(e.id for e in passed) or 'none'}",
    )
    problems = []
    if benign_blocked:
        problems.append("benign controls blocked:\n  " + "\n  ".join(benign_blocked))
    if unexplained_blocks:
        problems.append("blocks without evidence:\n  " + "\n  ".join(unexplained_blocks))
    if passed:
        problems.append(f"{len(passed)} hostile entries pass the audit:\n{table}")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


# ---- what an installed package did ----


def merged_root(directory: Path) -> Path:
    """dpkg_root() on a merged-/usr layout (bin, sbin, lib, lib64 are links into usr), with
    the real dpkg, file tools and bash, logging stand-ins for the rest, and the directories
    of a host."""
    root = directory / "root"
    for name in ("bin", "sbin", "lib", "lib64"):
        (root / "usr" / name).mkdir(parents=True)
        (root / name).symlink_to(f"usr/{name}")
    dpkg_root(directory)
    for tool in REAL_TOOLS:
        program = shutil.which(tool)
        assert program is not None, f"the host has no {tool} for the throw-away root"
        for library in _libraries(program):
            target = root / library.relative_to("/")
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(library, target)
        shutil.copy(program, root / "usr/bin" / tool)
    for tool in STAND_INS:
        stand_in = root / "usr/bin" / tool
        stand_in.write_text(f'#!/bin/sh\necho "{tool} $*" >> /tmp/tools-run\n')
        stand_in.chmod(0o755)
    for folder in (*SKELETON, *SANDBOX):
        (root / folder).mkdir(parents=True, exist_ok=True)
    return root


def dpkg_in(root: Path, deb: Path) -> subprocess.CompletedProcess[str]:
    """`dpkg --force-depends -i` with the throw-away root as / (bubblewrap, a user namespace
    of its own, no /proc or /sys): an absolute symlink in a package resolves inside it, as
    on the host it stands for. (`dpkg --root` resolves it on the real host: a package's
    `opt/x -> /etc` with a file under it wrote into the host's /etc.)"""
    bwrap = require_tool("bwrap")
    argv = [bwrap, "--unshare-user", "--uid", "0", "--gid", "0", "--unshare-pid"]
    argv += ["--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]
    argv += ["--cap-add", "ALL", "--bind", str(root), "/", "--dev", "/dev"]
    argv += ["--ro-bind", str(deb.parent), "/.debs", "--chdir", "/"]
    argv += ["dpkg", "--force-depends", "-i", f"/.debs/{deb.name}"]
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
        timeout=60,
        check=False,
    )


def snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    """Every path under the root (links not followed): what it is, and its identity."""
    found: dict[str, tuple[object, ...]] = {}
    for folder, directories, files in os.walk(root):
        for name in [*directories, *files]:
            path = Path(folder, name)
            info = path.lstat()
            kind = "l" if path.is_symlink() else "d" if path.is_dir() else "f"
            link = str(path.readlink()) if kind == "l" else None
            found[str(path.relative_to(root))] = (kind, link, info.st_size, info.st_mtime_ns)
    return found


def admitted(path: str, packages: Sequence[str], directory: bool) -> bool:
    docs = [re.compile(re.escape(f"usr/share/doc/{name}/") + ".*") for name in packages]
    if any(p.fullmatch(path) for p in (*ADMITTED, *docs)):
        return True
    # a directory on the way to an admitted place: opt, usr/share/doc, usr/lib/<triplet>
    ways = ["opt/xilinx/", f"usr/lib/{hostile.TRIPLET}/", "var/lib/dpkg/"]
    ways += [f"usr/share/doc/{name}/" for name in packages]
    return directory and any(way.startswith(path + "/") for way in ways)


def _is_module(data: bytes, depth: int = 0) -> bool:
    """A kernel module (an ELF relocatable with the module section), also compressed up to
    three times over: gzip, xz, lzma, bzip2, zstd, every member or stream."""
    if data[:4] == b"\x7fELF" and data[16] in (1, 0) and b".gnu.linkonce.this_module" in data:
        return True
    if depth >= 3:
        return False
    for magic, decompress in (
        (b"\x1f\x8b", gzip.decompress),
        (b"\xfd7zXZ", _unxz),
        (b"\x5d\x00\x00", _unxz),
        (b"BZh", bz2.decompress),
        (b"\x28\xb5\x2f\xfd", _unzstd),
    ):
        if data.startswith(magic):
            try:
                return _is_module(decompress(data), depth + 1)
            except (OSError, EOFError, ValueError, lzma.LZMAError, zstandard.ZstdError):
                return False
    return False


def _unxz(data: bytes) -> bytes:
    """Every stream, past the stream padding between them (lzma.decompress stops there)."""
    out = []
    while data:
        decompressor = lzma.LZMADecompressor()
        out.append(decompressor.decompress(data))
        data = decompressor.unused_data.lstrip(b"\0")
    return b"".join(out)


def _unzstd(data: bytes) -> bytes:
    reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
    return reader.read()


def _relations(status: str, packages: Sequence[str]) -> Iterator[str]:
    for paragraph in status.split("\n\n"):
        fields = dict(
            line.split(": ", 1)
            for line in paragraph.splitlines()
            if ": " in line and line[0] != " "
        )
        if fields.get("Package") not in packages:
            continue
        for name in RELATIONS:
            for alternative in re.split(r"[,|]", fields.get(name, "")):
                package = alternative.strip().split(" ")[0].split(":")[0]
                if _KERNEL_NAME.match(package):
                    yield f"status:{name}: {package}"


def observe(
    root: Path, before: dict[str, tuple[object, ...]], packages: Sequence[str]
) -> list[str]:
    """What the install did that the stack's layout does not admit, in the corpus' words."""
    seen = []
    for path, what in sorted(snapshot(root).items()):
        if before.get(path) == what or path in OUR_LOGS or path.split("/")[0] in SANDBOX:
            continue
        if what[0] == "d" and before.get(path, ("",))[0] == "d":
            continue  # a directory of the root's own: what changed in it is listed
        if what[0] == "f" and _is_module((root / path).read_bytes()):
            seen.append(f"module:{path}")
        if not admitted(path, packages, directory=what[0] == "d"):
            seen.append(f"lands:{path}")
    for log, prefix in (("tmp/module-tools", "runs"), ("tmp/tools-run", "tool")):
        if (root / log).exists():
            for line in (root / log).read_text().splitlines():
                # a stand-in handed no path did what debhelper's snippets do: nothing here
                if prefix == "runs" or "/" in line:
                    seen.append(f"{prefix}:{line}")
    interests = root / "var/lib/dpkg/triggers/File"
    if interests.exists():
        for line in interests.read_text().splitlines():
            path = line.split(" ")[0]
            if not path.startswith("/opt/xilinx/"):
                seen.append(f"interest:{path}")
    status = (root / "var/lib/dpkg/status").read_text()
    seen.extend(_relations(status, packages))
    return seen


@pytest.fixture(scope="module")
def installed(
    built: dict[str, list[Path]], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], tuple[list[str], str]]:
    """What an entry's packages did, installed in order into a fresh copy of one
    throw-away root (each entry installed once): observations, and dpkg's output."""
    template = merged_root(tmp_path_factory.mktemp("template"))
    done: dict[str, tuple[list[str], str]] = {}

    def install(entry_id: str) -> tuple[list[str], str]:
        if entry_id not in done:
            root = tmp_path_factory.mktemp(entry_id) / "root"
            shutil.copytree(template, root, symlinks=True)
            before = snapshot(root)
            output = []
            for deb in built[entry_id]:
                run = dpkg_in(root, deb)
                output.append(
                    f"$ dpkg -i {deb.name}: exit {run.returncode}\n{run.stdout}{run.stderr}"
                )
            names = [package.name for package in hostile.BY_ID[entry_id].packages]
            done[entry_id] = observe(root, before, names), "\n".join(output)
        return done[entry_id]

    return install


@needs_root
@pytest.mark.parametrize("entry_id", hostile.IDS)
def test_what_the_audit_passes_is_harmless_when_installed(
    built: dict[str, list[Path]],
    installed: Callable[[str], tuple[list[str], str]],
    entry_id: str,
) -> None:
    entry = hostile.BY_ID[entry_id]
    if judge(built[entry_id]).refused:
        return  # nothing to show: it is not installed
    seen, output = installed(entry_id)
    if seen:
        pytest.fail(
            f"{entry_id} passes the audit and, installed, {entry.does}:\n  "
            + "\n  ".join(seen)
            + f"\n{output}",
            pytrace=False,
        )


@needs_root
@pytest.mark.parametrize("entry_id", [e.id for e in hostile.ENTRIES if not e.benign])
def test_every_hostile_entry_does_what_it_says_when_installed(
    installed: Callable[[str], tuple[list[str], str]], entry_id: str
) -> None:
    # the corpus is real: each entry, installed, shows what its `shows` says
    seen, output = installed(entry_id)
    shows = hostile.BY_ID[entry_id].shows
    missing = [s for s in shows if not any(o.startswith(s) for o in seen)]
    assert not missing, f"{entry_id}: {missing} not seen; seen: {seen}\n{output}"
