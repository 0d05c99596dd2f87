"""A build environment made from the test's own files: the host's /usr bound read-only, its
own /etc and a real dpkg status database, and the env.json `doit env` would write."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

BWRAP = shutil.which("bwrap")


def _why_not() -> str | None:
    """Why an installed bubblewrap cannot make the sandbox here (None: it can, or it is
    missing, which the tools marker reports, and CI turns into a failure)."""
    if BWRAP is None:
        return None
    done = subprocess.run(
        [BWRAP, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    return None if done.returncode == 0 else f"bwrap refused: {done.stderr.strip()}"


WHY_NOT = _why_not()
# a list of marks, for `pytestmark = needs_bwrap`
needs_bwrap = [
    pytest.mark.tools("bwrap"),
    pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT)),
]


def status_text(packages: dict[str, str]) -> str:
    """A dpkg status database listing `packages` as installed (what dpkg itself writes)."""
    return "".join(
        f"Package: {name}\nStatus: install ok installed\nPriority: optional\n"
        f"Architecture: amd64\nMaintainer: Test <test@example.invalid>\nVersion: {version}\n"
        f"Description: {name}\n\n"
        for name, version in sorted(packages.items())
    )


def make_root(root: Path, packages: dict[str, str], *, os_id: str = "testdistro") -> Path:
    """usr -> the host's /usr (bound read-only), merged-/usr links, our /etc and dpkg db."""
    root.mkdir(parents=True)
    (root / "usr").symlink_to("/usr")
    for name in ("bin", "sbin", "lib", "lib64"):
        if Path(f"/usr/{name}").exists():
            (root / name).symlink_to(f"usr/{name}")
    etc = root / "etc"
    etc.mkdir()
    (etc / "os-release").write_text(f'ID={os_id}\nVERSION_ID="1"\n')
    (etc / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (etc / "group").write_text("root:x:0:\n")
    set_packages(root, packages)
    return root


def set_packages(root: Path, packages: dict[str, str]) -> None:
    dpkg = root / "var/lib/dpkg"
    (dpkg / "info").mkdir(parents=True, exist_ok=True)
    (dpkg / "updates").mkdir(exist_ok=True)
    (dpkg / "status").write_text(status_text(packages))


def make_environment(build_dir: Path, name: str, packages: dict[str, str]) -> Path:
    """build/envs/<name>/ as `doit env` leaves it: root/ and env.json."""
    base = build_dir / "envs" / name
    make_root(base / "root", packages)
    write_env_json(base, name, packages)
    return base


def write_env_json(base: Path, name: str, packages: dict[str, str]) -> None:
    distro, _, release = name.partition("-")
    record = {
        "schema": 1,
        "kind": "env",
        "environment": name,
        "distro": distro,
        "release": release,
        "archive": "none (made by the test)",
        "packages": dict(sorted(packages.items())),
    }
    (base / "env.json").write_text(json.dumps(record, indent=2) + "\n")
