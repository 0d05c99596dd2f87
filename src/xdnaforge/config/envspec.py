"""Build environments as data: the site's `environments:` entries and the choice for a recipe.

Pure: parses the site's entries through a schema Reader and chooses, for a recipe's
`build.environment`, how this machine provides it (host, rootfs, podman, docker), with the
reason `doit plan` shows. Creating, entering and recording environments is environments/local.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from xdnaforge.config.keyring import ArchiveKeyring, parse_keyring
from xdnaforge.schema import Reader
from xdnaforge.yamlfile import KeyPath

KINDS = ("host", "rootfs", "podman", "docker")
ROOTFS_KEYS = (
    "suite",
    "mirror",
    "script",
    "components",
    "twin",
    "compilers",
    "packages",
    "keyring",
)
# The archive a distro's own roots come from when the site names none.
DEFAULT_MIRRORS = {
    "debian": "http://deb.debian.org/debian",
    "ubuntu": "http://archive.ubuntu.com/ubuntu",
}
# release -> suite, for the default rootfs of a distro (debootstrap wants the code name)
CODENAMES = {
    ("debian", "11"): "bullseye",
    ("debian", "12"): "bookworm",
    ("debian", "13"): "trixie",
    ("debian", "14"): "forky",
    ("ubuntu", "22.04"): "jammy",
    ("ubuntu", "24.04"): "noble",
    ("ubuntu", "25.04"): "plucky",
    ("ubuntu", "25.10"): "questing",
    ("ubuntu", "26.04"): "resolute",
}
DEFAULT_COMPONENTS = {"debian": ("main",), "ubuntu": ("main", "universe")}


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvironmentSpec:
    """How this machine provides one (distro, release) for builds."""

    distro: str
    release: str
    kind: str  # host | rootfs | podman | docker
    origin: str  # "site.yaml:12" or "default"
    reason: str  # one sentence for `doit plan`
    suite: str | None = None
    mirror: str | None = None
    script: str | None = None  # debootstrap script name (None: the suite's own)
    components: tuple[str, ...] = ()
    twin: bool = False  # a root of another distro presenting this distro's identity
    compilers: tuple[tuple[str, str], ...] = ()  # ("CC", "gcc-15"), ("CXX", "g++-15")
    packages: tuple[str, ...] = ()  # installed beside the recipe's build dependencies
    image: str | None = None
    # rootfs: the keys the archive's Release file must be signed with (the site's entry,
    # else the recipe's build.environment.keyring); None: nothing is created
    keyring: ArchiveKeyring | None = None

    @property
    def name(self) -> str:
        return f"{self.distro}-{self.release}"

    def describe(self) -> str:
        """`ubuntu-26.04 (twin: rootfs of debian forky)` and the like, for records and reports."""
        if self.kind == "host":
            return f"{self.name} (host)"
        if self.kind == "rootfs":
            what = f"rootfs of {self.suite} from {self.mirror}"
            return f"{self.name} (twin: {what})" if self.twin else f"{self.name} ({what})"
        return f"{self.name} ({self.kind} image {self.image})"


def _entry(reader: Reader, value: Any, path: KeyPath, origin: str) -> EnvironmentSpec | None:
    name = str(path[-1])
    distro, _, release = name.partition("-")
    if not distro or not release:
        reader.problem(path, "is not <distro>-<release> (as in ubuntu-26.04)")
        return None
    table = reader.mapping(value, path, required=("kind",), optional=(*ROOTFS_KEYS, "image"))
    if table is None:
        return None
    kind = reader.choice(table, "kind", path, KINDS)
    if kind is None:
        return None
    allowed = {"host": (), "rootfs": ROOTFS_KEYS, "podman": ("image",), "docker": ("image",)}
    for key in table:
        if key != "kind" and key not in allowed[kind]:
            reader.problem((*path, key), f"does not apply to kind {kind}")
    if kind in ("podman", "docker") and "image" not in table:
        reader.problem(
            path, f"kind {kind} needs an image (e.g. docker.io/library/ubuntu@sha256:<digest>)"
        )
    image = reader.string(table, "image", path)
    if image is not None and not image.startswith("localhost/") and "@sha256:" not in image:
        # xdnaforge verifies the archives it reads by signature; an image the engine pulls is
        # verified by the engine against a digest, and only if one is named (a tag moves)
        reader.problem(
            (*path, "image"),
            "a registry image must be pinned by digest (NAME@sha256:...), which the engine "
            "checks the image against; a tag can move. An image built here is localhost/NAME",
        )
    compilers: tuple[tuple[str, str], ...] = ()
    if "compilers" in table:
        found = reader.mapping(table["compilers"], (*path, "compilers"), optional=("CC", "CXX"))
        compilers = tuple(
            (key, text)
            for key in ("CC", "CXX")
            if found
            and key in found
            and (text := reader.string(found, key, (*path, "compilers"))) is not None
        )
    twin = reader.boolean(table, "twin", path, default=False)
    suite = reader.string(table, "suite", path) or CODENAMES.get((distro, release))
    if kind == "rootfs" and suite is None:
        reader.problem(path, "no suite is known for this release: name the archive's suite")
    components = reader.strings(table, "components", path)
    return EnvironmentSpec(
        distro=distro,
        release=release,
        kind=kind,
        origin=origin,
        reason=f"{origin} provides {name} as {'a twin ' if twin else ''}{kind}",
        suite=suite if kind == "rootfs" else None,
        mirror=reader.string(table, "mirror", path, default=DEFAULT_MIRRORS.get(distro)),
        script=reader.string(table, "script", path),
        # a twin's archive is another distro's: only the component every archive has
        components=components or (("main",) if twin else DEFAULT_COMPONENTS.get(distro, ("main",))),
        twin=twin,
        compilers=compilers,
        packages=reader.strings(table, "packages", path),
        image=image,
        keyring=(
            parse_keyring(reader, table["keyring"], (*path, "keyring"))
            if "keyring" in table
            else None
        ),
    )


def parse_environments(reader: Reader, data: dict[str, Any]) -> tuple[EnvironmentSpec, ...]:
    """The site's `environments:` mapping, keyed by `<distro>-<release>`."""
    if "environments" not in data:
        return ()
    path: KeyPath = ("environments",)
    table = reader.mapping(data["environments"], path, free_keys=True)
    found = []
    for key, value in (table or {}).items():
        if isinstance(key, str):
            line = reader.document.where((*path, key))[0]
            entry = _entry(reader, value, (*path, key), f"{reader.source}:{line}")
            if entry is not None:
                found.append(entry)
    return tuple(found)


def choose_environment(
    wanted: tuple[str, str],
    host: tuple[str, str],
    entries: tuple[EnvironmentSpec, ...],
    keyring: ArchiveKeyring | None = None,
) -> EnvironmentSpec:
    """The site's entry for `wanted`, else the host when it runs that distro, else a rootfs
    from the distro's default archive. `keyring` (the recipe's build.environment.keyring)
    signs a rootfs whose site entry names no keyring of its own."""
    spec = _choose(wanted, host, entries)
    if spec.kind == "rootfs" and spec.keyring is None and keyring is not None:
        return replace(spec, keyring=keyring)
    return spec


def _choose(
    wanted: tuple[str, str], host: tuple[str, str], entries: tuple[EnvironmentSpec, ...]
) -> EnvironmentSpec:
    distro, release = wanted
    for entry in entries:
        if (entry.distro, entry.release) == wanted:
            if entry.kind == "host" and host != wanted:
                return EnvironmentSpec(
                    distro=distro,
                    release=release,
                    kind="host",
                    origin=entry.origin,
                    reason=f"{entry.origin} says host, but this host runs {host[0]} {host[1]}, "
                    f"not {distro} {release}",
                )
            return entry
    if host == wanted:
        return EnvironmentSpec(
            distro=distro,
            release=release,
            kind="host",
            origin="default",
            reason=f"this host runs {distro} {release}: the build uses the host's toolchain",
        )
    suite = CODENAMES.get(wanted)
    mirror = DEFAULT_MIRRORS.get(distro)
    return EnvironmentSpec(
        distro=distro,
        release=release,
        kind="rootfs",
        origin="default",
        reason=f"this host runs {host[0]} {host[1]}: a {distro} {release} root made with "
        f"mmdebstrap (or debootstrap) from {mirror or 'no known archive'} (no site.yaml entry "
        f"for {distro}-"
        f"{release})",
        suite=suite,
        mirror=mirror,
        components=DEFAULT_COMPONENTS.get(distro, ("main",)),
    )


def host_mismatch(spec: EnvironmentSpec, host: tuple[str, str]) -> str | None:
    """Why a `host` environment cannot be used here (None when it can)."""
    if spec.kind == "host" and host != (spec.distro, spec.release):
        return spec.reason
    return None
