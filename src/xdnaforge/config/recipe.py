"""Recipe models: one pinned userspace line (a vendor's prebuilt packages, or a distribution's
own XRT packages from its archive) as frozen data.

Pure. Reading them from YAML is config/recipe_parse.py; cross-file checks are in config/project.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdnaforge.config.kernel import KernelRange
from xdnaforge.config.keyring import ArchiveKeyring
from xdnaforge.config.proof import CompatChange

GATES = ("host", "memlock", "device", "runtime", "examine", "validate", "pyxrt")
PLACEHOLDERS = ("jobs",)
# built from pinned sources, a vendor's .deb files, or a distribution archive's packages
KINDS = ("source", "prebuilt", "distro")
UNPINNED = "unpinned"


@dataclass(frozen=True, slots=True, kw_only=True)
class Npu:
    pci: str  # vendor:device, lowercase hex
    revision: str | None  # "0x10"; None = any revision
    name: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class HostSpec:
    distro_id: str
    distro_version: str
    kernel: KernelRange
    npus: tuple[Npu, ...]
    # where the userspace runs on these hosts: on the host itself, or (an immutable host such
    # as ZimaOS) in a container made from runtime_image; not where it is built
    runtime: str = "host"
    runtime_image: str | None = None


# the checkable fields of a `driver:` contract; each is stated or explained in `unknown:`
CONTRACT_FIELDS = ("drm_version", "firmware_version", "firmware_protocol_major", "cmd_bo_max_bytes")


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverContract:
    """What the userspace line relies on from the kernel driver it talks to."""

    driver: str
    drm_version: str | None
    firmware_version: str | None
    firmware_protocol_major: int | None
    cmd_bo_max_bytes: int | None
    notes: str | None
    # a field the contract leaves unstated -> why it is not known (doit check wants every
    # field stated or explained: a contract nothing reads is one nobody holds)
    unknown: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Submodule:
    path: str
    commit: str
    ref: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class UnusedSubmodule:
    path: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    name: str
    url: str
    commit: str
    ref: str | None
    submodules: tuple[Submodule, ...]
    unused_submodules: tuple[UnusedSubmodule, ...]
    # the upstream branch this line follows (`doit track --check` compares the pin with it)
    track: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PrebuiltPackage:
    """A vendor .deb named by file and sha256 (UNPINNED until someone checked it)."""

    file: str
    package: str
    sha256: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DistroPackage:
    """A binary package of a distribution archive at one exact version (epoch included) and
    its sha256 (UNPINNED until first seen: the target's lock.json then keeps it)."""

    package: str
    version: str
    sha256: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LeftOut:
    """A binary package of the same source package that the stack leaves out, and why."""

    package: str
    reason: str
    # at this version it is downloaded too and audited (audit.json left_out), never installed
    version: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DistroArchive:
    """Where a distro stack comes from: an apt archive (or PPA) and the packages taken."""

    url: str  # the archive's base URL (what a sources.list `deb` line names)
    suite: str  # forky, resolute, noble, ...
    components: tuple[str, ...]
    signed_by: str | None  # the keyring apt checks the Release file with; None: unsigned
    architecture: str
    source_package: str | None  # the source package the binaries come from (xrt)
    packages: tuple[DistroPackage, ...]
    left_out: tuple[LeftOut, ...]
    # the keys the Release file must be signed with (None: the recipe names none; refused)
    keyring: ArchiveKeyring | None = None

    def sources_line(self, url: str | None = None, keyring: str | None = None) -> str:
        """The sources.list line apt is given (`url` replaces the archive's: a mirror;
        `keyring` the keyring file apt checks the Release file with)."""
        options = [f"arch={self.architecture}"]
        signed = keyring or self.signed_by
        options.append(f"signed-by={signed}" if signed else "trusted=yes")
        return (
            f"deb [{' '.join(options)}] {url or self.url} {self.suite} {' '.join(self.components)}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CtestExpectation:
    total: int
    skipped: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildStep:
    name: str
    cwd: str
    argv: tuple[str, ...]
    packages: tuple[str, ...]  # globs relative to cwd: what the package stage collects
    produces: tuple[str, ...]
    # Package name -> glob: which file to take when several collected files carry that
    # Package field (XRT 2.19 makes xrt_*-Runtime.deb and xrt_*-runtime.deb, both xrt-runtime)
    choose: tuple[tuple[str, str], ...]
    timeout_minutes: int
    ctest: CtestExpectation | None
    origin: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Justified:
    """A known test failure or an audit waiver: what, for which package, and why."""

    name: str
    package: str | None
    justification: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Admitted:
    """A payload path pattern a recipe admits beyond the stack's layout, with why."""

    path: str
    reason: str
    package: str | None = None


# the maintainer scripts a package's control member may hold (audit.scripts[].script)
SCRIPTS = ("preinst", "postinst", "prerm", "postrm", "config", "triggers")


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptWaiver:
    """A maintainer script accepted by its exact sha256, with why."""

    package: str
    script: str
    sha256: str
    justification: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Thresholds:
    gemm_tops_min: float | None
    latency_us_max: float | None
    throughput_ops_min: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Baseline:
    gemm_tops: float
    latency_us: float
    throughput_ops: float
    evidence: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Validation:
    gates: tuple[str, ...]
    memlock_min_kib: int | None  # None = unlimited
    xrt_version: str | None
    plugin_version: str | None
    firmware_version: str | None
    thresholds: Thresholds
    baseline: Baseline | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Recipe:
    name: str
    kind: str
    description: str
    origin: str
    digest: str  # sha256 of the recipe file: recorded with what it made, not a fingerprint
    hosts: HostSpec
    driver: DriverContract
    source: Source | None  # None for prebuilt recipes
    prebuilt: tuple[PrebuiltPackage, ...]
    patch_sets: tuple[str, ...]
    steps: tuple[BuildStep, ...]
    build_depends: tuple[tuple[str, tuple[str, ...]], ...]  # ("ubuntu-26.04", packages)
    known_test_failures: tuple[Justified, ...]
    waivers: tuple[Justified, ...]
    install_order: tuple[str, ...]
    validation: Validation
    # (distro, release) the build runs in: `build.environment`; None = the hosts' distro
    environment: tuple[str, str] | None = None
    # build.environment.keyring: the keys the environment's archive is signed with
    environment_keyring: ArchiveKeyring | None = None
    compat: tuple[CompatChange, ...] = ()  # flags and dependencies added for compatibility
    distro: DistroArchive | None = None  # kind distro: the archive and its packages
    # audit.admit: reviewed payload paths beyond the layout; audit.scripts: scripts by digest
    admit: tuple[Admitted, ...] = ()
    script_waivers: tuple[ScriptWaiver, ...] = ()

    @property
    def build_distro(self) -> tuple[str, str]:
        """The distro and release the packages are built for (and in)."""
        if self.environment is not None:
            return self.environment
        return (self.hosts.distro_id, self.hosts.distro_version)

    @property
    def pinned(self) -> Source:
        """The pinned source tree; only source recipes have one (plans never ask otherwise)."""
        if self.source is None:
            raise TypeError(f"recipe {self.name} is {self.kind}: it has no source tree")
        return self.source

    def produced_packages(self) -> tuple[str, ...]:
        if self.kind == "prebuilt":
            return tuple(p.package for p in self.prebuilt)
        if self.distro is not None:
            return tuple(p.package for p in self.distro.packages)
        return tuple(name for step in self.steps for name in step.produces)

    def depends_for(self, distro_id: str, distro_version: str) -> tuple[str, ...] | None:
        wanted = f"{distro_id}-{distro_version}"
        for key, packages in self.build_depends:
            if key == wanted:
                return packages
        return None
