"""A rebuild's own copy-on-write view of a build environment's root, with the build
dependencies a .buildinfo recorded installed into it; the shared root is never written.

Owns build/rebuild/envs/<distro>-<release>/: `root/` (one overlay per top-level directory the
steps would see of the shared root, its upper layer under `layers/`), `env.json` (the shared
one's, with the view's packages) and `apt.log`; the apt calls inside the view; and the pure
choice of the version to install per recorded package (the recorded one where the archive has
it, else the nearest). Making the overlays needs root, as `doit env` does; the view is
unmounted when the rebuild ends, and what an earlier, killed run left mounted is unmounted
before a new view is made. Edge module: starts mount, umount and apt through process/run.py.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdnaforge.config.envspec import EnvironmentSpec
from xdnaforge.environments.local import RECORD, root_entries
from xdnaforge.errors import ToolNotFound
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.process.sandbox import PATH_INSIDE, admin_argv
from xdnaforge.state.records import write_record
from xdnaforge.tools import apt
from xdnaforge.tools.dpkg import parse_status

# made fresh (empty) in the view: bubblewrap mounts its own there, as for the steps
EMPTY = frozenset({"proc", "dev", "sys", "tmp", "run"})
APT_ENV = {"DEBIAN_FRONTEND": "noninteractive", "PATH": PATH_INSIDE}
MOUNTINFO = Path("/proc/self/mountinfo")


class ViewRefused(Exception):
    """The view could not be made (not root, mount refused): the rebuild goes on without it."""


@dataclass(frozen=True, slots=True)
class Choice:
    """What the view gets for one recorded build dependency the shared root does not have."""

    package: str
    recorded: str
    here: str | None  # the shared root's version (None: not installed there)
    version: str | None  # to install (None: nothing, see note)
    note: str


def nearest(recorded: str, offered: Sequence[str]) -> str | None:
    """The recorded version if offered, else the newest older one, else the oldest newer
    one (dpkg's ordering); None when nothing is offered. Pure."""
    if recorded in offered:
        return recorded
    older = [v for v in offered if apt.compare_versions(v, recorded) < 0]
    if older:
        return apt.newest(older)
    newer = sorted(offered, key=functools.cmp_to_key(apt.compare_versions))
    return newer[0] if newer else None


def choose(
    recorded: Sequence[tuple[str, str]], here: dict[str, str], offered: dict[str, list[str]]
) -> list[Choice]:
    """Per recorded package the shared root has at another version (or not at all): the
    version to install into the view, or why none is (pure)."""
    found = []
    for name, version in recorded:
        mine = here.get(name)
        if mine == version:
            continue
        close = nearest(version, offered.get(name, []))
        if close is None:
            note = f"the archive has no version of {name}"
            found.append(Choice(name, version, mine, None, note))
        elif close == mine:
            note = f"the archive no longer has {version}; the environment has the nearest, {mine}"
            found.append(Choice(name, version, mine, None, note))
        elif close == version:
            found.append(Choice(name, version, mine, version, f"installing {name}={version}"))
        else:
            note = f"the archive no longer has {version}; installing the nearest, {name}={close}"
            found.append(Choice(name, version, mine, close, note))
    return found


def differences(
    recorded: Sequence[tuple[str, str]],
    installed: dict[str, str],
    choices: Sequence[Choice],
    failed: dict[str, str],
) -> list[dict[str, str]]:
    """Each recorded build dependency the view still does not have at the recorded version
    after the install, with the version the rebuild was built with and why (pure)."""
    chosen = {c.package: c for c in choices}
    found = []
    for name, version in recorded:
        here = installed.get(name)
        if here == version:
            continue
        used = here or "absent"
        choice = chosen.get(name)
        if name in failed:
            why = f"apt could not install {choice.version if choice else version} ({failed[name]})"
        elif choice is not None and choice.version is None:
            why = choice.note
        elif choice is not None and choice.version != version:
            why = f"the archive no longer has {version}; the nearest it has is {choice.version}"
        else:
            why = "the view did not get it"
        found.append(
            {
                "package": name,
                "recorded": version,
                "used": used,
                "archive": why,
                "note": f"{name} {version} could not be had ({why}); built with {used}",
            }
        )
    return found


def mount_argv(lower: Path, upper: Path, work: Path, merged: Path) -> list[str]:
    """`mount -t overlay`: `merged` shows `lower`, every write lands in `upper`."""
    options = f"lowerdir={lower},upperdir={upper},workdir={work}"
    return ["mount", "-t", "overlay", "overlay", "-o", options, str(merged)]


def install_argv(versions: Sequence[tuple[str, str]]) -> list[str]:
    """apt-get install of exact versions, downgrades allowed (the recorded ones are older)."""
    pinned = [f"{name}={version}" for name, version in versions]
    # --no-remove: a version that needs packages removed is not had, never at their expense
    return [
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "--allow-downgrades",
        "--no-remove",
        *pinned,
    ]


def mounts_below(mountinfo: str, base: Path) -> list[Path]:
    """The mount points at or below `base` in /proc/self/mountinfo's text, deepest first
    (pure; the kernel writes a space in a path as \\040)."""
    found = []
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        if len(fields) < 5:
            continue
        point = Path(_unescape(fields[4]))
        if point == base or point.is_relative_to(base):
            found.append(point)
    return sorted(set(found), key=lambda p: (-len(p.parts), str(p)))


def _unescape(text: str) -> str:
    for code in ("040", "011", "012", "134"):
        text = text.replace(f"\\{code}", chr(int(code, 8)))
    return text


def _unsafe(path: Path) -> bool:
    """A path mount's option string cannot carry (its separators)."""
    return any(c in str(path) for c in ",:\\")


@dataclass
class View:
    """A mounted view: build steps of the rebuild see `root` as their environment."""

    spec: EnvironmentSpec
    base: Path  # build/rebuild/envs/<name>
    bwrap: str
    mounted: list[Path]

    @property
    def root(self) -> Path:
        return self.base / "root"

    @property
    def log(self) -> Path:
        return self.base / "apt.log"

    def _apt(self, argv: Sequence[str], timeout: float) -> str:
        result = run(
            [*admin_argv(self.bwrap, self.root), *argv],
            cwd=Path("/"),
            env=APT_ENV,
            timeout=timeout,
            log_file=self.log,
        )
        return result.stdout

    def update(self) -> str | None:
        """apt-get update inside the view; None, or why the root's own lists were kept."""
        try:
            self._apt(["apt-get", "update"], 600)
        except CommandFailed as error:
            last = [line for line in error.output.splitlines() if line.strip()][-1:]
            return f"apt-get update failed in the view ({''.join(last)[:200]}; see {self.log})"
        return None

    def offered(self, names: Sequence[str]) -> dict[str, list[str]]:
        """What the view's apt offers for `names` (apt-cache madison)."""
        if not names:
            return {}
        try:
            out = run(
                [*admin_argv(self.bwrap, self.root), *apt.madison_argv(list(names))],
                cwd=Path("/"),
                env=APT_ENV,
                timeout=300,
                log_file=self.log,
                ok_codes=(0, 100),
            ).stdout
        except CommandFailed:
            return {}
        return apt.parse_madison(out)

    def install(self, versions: Sequence[tuple[str, str]]) -> dict[str, str]:
        """Install exact versions into the view, together or, where that fails, one by one;
        {package: why} for each that apt could not install."""
        if not versions:
            return {}
        failed: dict[str, str] = {}
        try:
            self._apt(install_argv(versions), 3600)
        except CommandFailed:
            for name, version in versions:
                try:
                    self._apt(install_argv([(name, version)]), 3600)
                except CommandFailed as error:
                    lines = [x for x in error.output.splitlines() if x.startswith("E:")]
                    failed[name] = (lines[0] if lines else "apt-get install failed")[:200]
        with contextlib.suppress(CommandFailed):
            self._apt(["apt-get", "clean"], 120)  # the downloaded files are not the view
        return failed

    def installed(self) -> dict[str, str]:
        status = self.root / "var/lib/dpkg/status"
        try:
            return parse_status(status.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return {}

    def write_record(self, shared: dict[str, Any]) -> None:
        """env.json for the view: the shared environment's, with the view's packages."""
        body = {k: v for k, v in shared.items() if k not in ("schema", "kind", "xdnaforge")}
        body.update(
            {
                "environment": self.spec.name,
                "distro": self.spec.distro,
                "release": self.spec.release,
                "provider": str(shared.get("provider", self.spec.kind)),
                "twin": bool(shared.get("twin", self.spec.twin)),
                "description": f"{shared.get('description', self.spec.describe())}, seen "
                "through rebuild-check's copy-on-write view with the recorded build dependencies",
                "requested": list(shared.get("requested", [])),
                "packages": dict(sorted(self.installed().items())),
            }
        )
        write_record(self.base / RECORD, "env", body)

    def close(self) -> list[str]:
        """Unmount the view (the upper layers stay under layers/ until the next rebuild);
        the mount points that would not go."""
        stuck = _unmount(self.base)
        if not stuck:
            shutil.rmtree(self.root, ignore_errors=True)
        self.mounted = []
        return [str(p) for p in stuck]


def _unmount(base: Path) -> list[Path]:
    """Unmount everything at or below `base`, deepest first; what is still mounted."""
    try:
        points = mounts_below(MOUNTINFO.read_text(), base)
    except OSError:
        return []
    for point in points:
        try:
            run(["umount", str(point)], cwd=Path("/"), timeout=120)
        except CommandFailed:
            with contextlib.suppress(CommandFailed):
                run(["umount", "--lazy", str(point)], cwd=Path("/"), timeout=120)
    try:
        return mounts_below(MOUNTINFO.read_text(), base)
    except OSError:
        return []


def open_view(spec: EnvironmentSpec, shared_root: Path, base: Path, bwrap: str) -> View:
    """Mount the view of `shared_root` at `base`/root: one overlay per top-level directory
    the steps see (an absolute symlink's target included, as root_entries resolves it),
    relative symlinks copied, proc/dev/sys/tmp/run empty. Raises ViewRefused."""
    if os.geteuid() != 0:
        raise ViewRefused(
            "making the rebuild's view of the environment needs root (mount -t overlay), "
            "as `doit env` does"
        )
    stuck = _unmount(base)
    if stuck:
        raise ViewRefused(f"an earlier view is still mounted at {stuck[0]}; unmount it")
    shutil.rmtree(base, ignore_errors=True)
    view = View(spec, base, bwrap, [])
    root = view.root
    root.mkdir(parents=True)
    (root / "tmp").mkdir(mode=0o1777)
    (root / "tmp").chmod(0o1777)  # apt and dpkg write there; bwrap mounts none for them
    for entry in root_entries(shared_root):
        place = root / entry.name
        if entry.name in EMPTY or entry.name == "lost+found":
            place.mkdir(exist_ok=True)
        elif entry.symlink is not None:
            place.symlink_to(entry.symlink)
        else:
            upper, work = base / "layers/upper" / entry.name, base / "layers/work" / entry.name
            for path in (place, upper, work):
                path.mkdir(parents=True)
            if any(_unsafe(p) for p in (entry.source, upper, work, place)):
                view.close()
                raise ViewRefused(f"a path holds ',', ':' or '\\' ({entry.source} or {base})")
            try:
                run(mount_argv(entry.source, upper, work, place), cwd=Path("/"), timeout=120)
            except (CommandFailed, ToolNotFound) as error:
                view.close()
                text = error.output if isinstance(error, CommandFailed) else str(error)
                said = text.strip().splitlines()[-1:] or ["no message"]
                raise ViewRefused(f"the overlay of /{entry.name} was refused ({said[0]})") from None
            view.mounted.append(place)
    return view
