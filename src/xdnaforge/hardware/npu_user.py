"""Whom validation speaks for: the NPU's user (site.yaml `npu_user`, else the user who ran
`doit install`, recorded in install.json), that user's identity under the sysroot, and the
argv prefix that runs a command as them with a login-like session.

The memlock limit and the device node's permissions are the user's, not root's: a gate run
as root proves nothing about them. When xdnaforge runs as root (the boot unit does), the
user-level gates run through `runuser -u USER --`: PAM's `runuser` service applies
pam_limits (the user's memlock) and initgroups gives the user's supplementary groups
(render). Reads files only; starts no process.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.state.records import read_record

# runuser without -l takes an argv (no shell string), and still opens a PAM session
SWITCH = ("runuser", "-u")


@dataclass(frozen=True, slots=True)
class NpuUser:
    name: str
    uid: int
    gid: int
    source: str  # where the name came from: site.yaml, install.json, the running user

    def describe(self) -> str:
        return f"{self.name} (uid {self.uid}, from {self.source})"


def installing_user(environ: dict[str, str] | None = None) -> str:
    """Who ran `doit install`: sudo's caller when run with sudo, else the running user."""
    env = dict(os.environ) if environ is None else environ
    if env.get("SUDO_USER") and env.get("SUDO_USER") != "root":
        return env["SUDO_USER"]
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return env.get("USER") or str(os.getuid())


def parse_passwd(text: str, name: str) -> tuple[int, int] | None:
    """(uid, gid) of `name` in an /etc/passwd text; pure."""
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 4 and fields[0] == name and fields[2].isdigit() and fields[3].isdigit():
            return int(fields[2]), int(fields[3])
    return None


def named_user(site_user: str | None, artifacts: Path, sysroot: Path) -> tuple[str, str] | None:
    """(name, source): site.yaml's npu_user, else the installer recorded in an install.json
    for this sysroot."""
    if site_user:
        return site_user, "site.yaml npu_user"
    root = str(sysroot.resolve())
    for path in sorted(artifacts.glob("*/install.json")):
        record = read_record(path) or {}
        installed = str(record.get("state", "")).startswith("installed")
        if record.get("user") and record.get("root") == root and installed:
            return str(record["user"]), f"{path.parent.name}/install.json"
    return None


def lookup(name: str, source: str, sysroot: Path) -> NpuUser | None:
    """The user's uid and gid from the sysroot's passwd (the system's when it is /)."""
    try:
        text = (sysroot / "etc/passwd").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    found = parse_passwd(text, name)
    if found is None and sysroot == Path("/"):
        try:
            entry = pwd.getpwnam(name)
            found = entry.pw_uid, entry.pw_gid
        except KeyError:
            found = None
    return NpuUser(name, found[0], found[1], source) if found else None


def running_uid(sysroot: Path) -> int:
    """The effective uid of this process as the sysroot shows it (a fake root may say 0)."""
    try:
        text = (sysroot / "proc/self/status").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return os.geteuid()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "Uid" and len(value.split()) > 1:
            return int(value.split()[1])
    return os.geteuid()


def as_user(user: NpuUser) -> list[str]:
    return [*SWITCH, user.name, "--"]
