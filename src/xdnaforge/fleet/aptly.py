"""aptly: its configuration, argv builders, output parsers, and the files a host needs; pure.

The layout is one aptly root under artifacts/apt (database, pool, and `public/`, the tree
any web server can serve), a local repository per distro release, a snapshot per build
and a published prefix per target. Nothing here runs aptly or gpg (fleet/publish.py does).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ORIGIN = "xdnaforge"
COMPONENT = "main"
KEYRING = "xdnaforge-archive-keyring.gpg"
# where hosts keep the keyring the sources entry names (Debian's place for third-party keys)
HOST_KEYRING_DIR = "/etc/apt/keyrings"
PIN_PRIORITY = 1001  # above 1000: apt even downgrades to it, which is what a rollback needs


@dataclass(frozen=True, slots=True)
class AptLayout:
    """Where aptly keeps things for one site: config under build/, data under artifacts/."""

    config: Path  # build/aptly/aptly.conf (regenerated every run)
    root: Path  # artifacts/apt: db/, pool/, public/

    @property
    def public(self) -> Path:
        """What `aptly serve` and any web server serve; `publish` writes only here."""
        return self.root / "public"


@dataclass(frozen=True, slots=True)
class DebRef:
    """A package in a snapshot, from aptly's `name_version_arch` key."""

    package: str
    version: str
    architecture: str


def config_json(layout: AptLayout, architectures: Sequence[str]) -> str:
    """aptly's configuration: everything under our directories, never ~/.aptly.

    Publishing goes to aptly's own `public/` under rootDir, not to a FileSystemPublishEndpoint,
    because `aptly serve` serves only that directory (an endpoint tree answers 404 there).
    """
    config = {
        "rootDir": str(layout.root),
        "architectures": list(architectures),
        "gpgProvider": "gpg",
        "gpgDisableSign": False,
        "gpgDisableVerify": False,
        "downloadConcurrency": 1,
        "dependencyFollowSuggests": False,
        "skipContentsPublishing": False,
    }
    return json.dumps(config, indent=2) + "\n"


def repo_name(distro_id: str, distro_version: str) -> str:
    return f"xdnaforge-{distro_id}-{distro_version}"


def distribution(distro_id: str, distro_version: str) -> str:
    return f"{distro_id}-{distro_version}"


def snapshot_name(target: str, lock_digest: str | None, package_digests: Sequence[str]) -> str:
    """`<target>-<lock digest>-<packages digest>`: the same name means the same build.

    The lock digest says which sources; the packages digest (of the audited sha256s, sorted)
    tells two builds of the same sources apart (another toolchain makes other files).
    """
    packages = hashlib.sha256("\n".join(sorted(package_digests)).encode()).hexdigest()
    lock = (lock_digest or "nolock")[:12]  # a prebuilt recipe has no source lock
    return f"{target}-{lock}-{packages[:8]}"


def aptly(layout: AptLayout, *args: str) -> list[str]:
    return ["aptly", f"-config={layout.config}", *args]


def repo_create_argv(layout: AptLayout, repo: str, dist: str) -> list[str]:
    return aptly(layout, "repo", "create", f"-distribution={dist}", f"-component={COMPONENT}", repo)


def repo_clear_argv(layout: AptLayout, repo: str) -> list[str]:
    # every package has a Name, so this query empties the repository; snapshots keep theirs
    return aptly(layout, "repo", "remove", repo, "Name (~ .)")


def repo_add_argv(layout: AptLayout, repo: str, files: Sequence[Path]) -> list[str]:
    return aptly(layout, "repo", "add", repo, *(str(f) for f in files))


def snapshot_create_argv(layout: AptLayout, snapshot: str, repo: str) -> list[str]:
    return aptly(layout, "snapshot", "create", snapshot, "from", "repo", repo)


def publish_argv(
    layout: AptLayout, snapshot: str, prefix: str, dist: str, key: str, *, switch: bool
) -> list[str]:
    """First publish of a prefix, or a switch of an existing one to another snapshot.

    -batch: gpg must never wait for a passphrase on a terminal that nobody watches.
    -force-overwrite: two builds of one version (a rebuild) have one pool file name; the
    index published with it names the right digest, and apt checks that.
    """
    signing = ["-batch", f"-gpg-key={key}", "-force-overwrite"]
    if switch:
        return aptly(layout, "publish", "switch", *signing, dist, prefix, snapshot)
    return aptly(
        layout,
        "publish",
        "snapshot",
        *signing,
        f"-distribution={dist}",
        f"-origin={ORIGIN}",
        f"-label={ORIGIN}",
        snapshot,
        prefix,
    )


def parse_lines(text: str) -> list[str]:
    """`aptly ... list -raw`: one name (or `prefix distribution`) a line."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def parse_snapshot_packages(text: str) -> list[DebRef]:
    """The `Packages:` section of `aptly snapshot show -with-packages`."""
    refs = []
    inside = False
    for line in text.splitlines():
        if line.startswith("Packages:"):
            inside = True
            continue
        if inside and line.startswith("  ") and line.strip():
            # the name may hold an underscore (xrt_plugin-amdxdna); version and arch cannot
            package, version, architecture = line.strip().rsplit("_", 2)
            refs.append(DebRef(package, version, architecture))
        elif inside and line.strip():
            break
    return refs


def sources_entry(url: str, prefix: str, dist: str, architectures: Sequence[str]) -> str:
    """The sources.list.d line; signed-by makes apt trust our key for this entry only."""
    return (
        f"# xdnaforge {prefix}: install the keyring as {HOST_KEYRING_DIR}/{KEYRING}\n"
        f"deb [arch={','.join(architectures)} signed-by={HOST_KEYRING_DIR}/{KEYRING}] "
        f"{url}/{prefix} {dist} {COMPONENT}\n"
    )


def preferences(snapshot: str, packages: Sequence[DebRef]) -> str:
    """apt_preferences(5): each package of the snapshot pinned to its version at 1001.

    A version pin also holds the installed version, so a host keeps this build when the
    repository moves on, and a new file naming an older snapshot downgrades to it.
    """
    stanzas = [
        f"Explanation: xdnaforge snapshot {snapshot}\n"
        f"Package: {ref.package}\n"
        f"Pin: version {ref.version}\n"
        f"Pin-Priority: {PIN_PRIORITY}\n"
        for ref in sorted(packages, key=lambda r: r.package)
    ]
    return "\n".join(stanzas)
