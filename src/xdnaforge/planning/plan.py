"""From recipe + site + host facts to the ordered stages of a target, with fingerprints; pure.

A stage's fingerprint hashes its own inputs and the fingerprints of the stages it consumes,
so a change anywhere invalidates exactly what is downstream of it. The running kernel is
never an input: `-nokmod` userspace does not depend on it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xdnaforge.config.envspec import EnvironmentSpec
from xdnaforge.config.project import Patch
from xdnaforge.config.recipe import Recipe
from xdnaforge.host import HostFacts
from xdnaforge.process.sandbox import WORK_INSIDE
from xdnaforge.state.paths import Workspace

FINGERPRINT_VERSION = 1  # bump when the meaning of a stage's inputs changes


@dataclass(frozen=True, slots=True, kw_only=True)
class Stage:
    name: str  # fetch, patch, deps, build-xrt, ...
    title: str
    consumes: tuple[str, ...]
    produces: tuple[str, ...]
    record: str | None  # record file (under artifacts/<target>/) that stores its fingerprint
    inputs_json: str  # canonical JSON of the inputs (a string keeps the dataclass hashable)
    fingerprint: str
    on_request: bool = False  # install/validate: never run as part of `build`

    @property
    def inputs(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.inputs_json)
        return result


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    target: str
    recipe: Recipe
    patches: tuple[Patch, ...]
    stages: tuple[Stage, ...]
    distro: tuple[str, str]
    toolchain: tuple[tuple[str, str], ...]
    host: HostFacts  # the facts the plan was made with, read once by the command
    environment: EnvironmentSpec | None = None  # None: the host (a recipe without one)

    def pipeline(self) -> tuple[Stage, ...]:
        """The stages `doit build` runs, in order (install and validate are on request)."""
        return tuple(s for s in self.stages if not s.on_request)

    @property
    def fingerprint(self) -> str:
        """The input fingerprint of the whole build: that of its last build stage."""
        return next(s.fingerprint for s in reversed(self.stages) if s.name == "package")

    def stage(self, name: str) -> Stage:
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise KeyError(name)


def canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def digest(data: Any) -> str:
    return hashlib.sha256(canonical(data).encode()).hexdigest()


def _stage(
    name: str,
    title: str,
    consumes: Sequence[str],
    produces: Sequence[str],
    record: str | None,
    inputs: Mapping[str, Any],
    upstream: Sequence[Stage] = (),
    *,
    on_request: bool = False,
) -> Stage:
    full = {
        "fingerprint_version": FINGERPRINT_VERSION,
        **inputs,
        "upstream": {s.name: s.fingerprint for s in upstream},
    }
    return Stage(
        name=name,
        title=title,
        consumes=tuple(consumes),
        produces=tuple(produces),
        record=record,
        inputs_json=canonical(full),
        fingerprint=digest(full),
        on_request=on_request,
    )


def plan_target(
    recipe: Recipe,
    patches: Sequence[Patch],
    workspace: Workspace,
    *,
    distro: tuple[str, str],
    toolchain: Mapping[str, str],
    host: HostFacts,
    environment: EnvironmentSpec | None = None,
) -> Plan:
    """The ordered stages of `recipe` built in `distro` with `toolchain` (the host's, or
    the environment's packages when `environment` is not the host) on the host `host`."""
    records = workspace.records
    if recipe.kind == "prebuilt":
        # a vendor's packages: nothing to fetch, patch or build; collected, then as ours
        package = _stage(
            "package",
            "collect the vendor's .deb files and check each against the sha256 the recipe pins",
            [f"{p.file} (sha256 {p.sha256})" for p in recipe.prebuilt],
            [str(workspace.packages), str(records / "packages.json")],
            "packages",
            {
                "prebuilt": [
                    {"file": p.file, "package": p.package, "sha256": p.sha256}
                    for p in recipe.prebuilt
                ]
            },
        )
        return _finish(recipe, workspace, [], package, patches, (distro, toolchain, host), None)
    if recipe.distro is not None:
        return _finish(
            recipe, workspace, [], _download(recipe, workspace), (), (distro, {}, host), None
        )
    source = recipe.pinned
    fetch = _stage(
        "fetch",
        "check out the pinned sources (nested submodules included) and verify every pin",
        [f"{source.url} @ {source.commit}"] + [f"{s.path} @ {s.commit}" for s in source.submodules],
        [str(workspace.source_tree), str(records / "lock.json")],
        "lock",
        {
            "url": source.url,
            "commit": source.commit,
            "submodules": {s.path: s.commit for s in source.submodules},
            "unused_submodules": sorted(s.path for s in source.unused_submodules),
        },
    )
    patch = _stage(
        "patch",
        "apply the patch series (no fuzz; already-applied patches are reported and skipped)",
        [str(records / "lock.json")] + [f"patches/{p.set}/{p.file}" for p in patches],
        [str(workspace.source_tree) + " (patched)", str(records / "lock.json")],
        "lock",
        {
            "patches": [
                {
                    "set": p.set,
                    "file": p.file,
                    "sha256": p.sha256,
                    "repository": p.header.repository,
                }
                for p in patches
            ]
        },
        [fetch],
    )
    depends = recipe.depends_for(*distro)
    deps = _stage(
        "deps",
        "check build dependencies (dpkg-query"
        + (f" inside {environment.name}" if environment and environment.kind != "host" else "")
        + ") and that the pinned scripts accept every option",
        [f"build.depends[{distro[0]}-{distro[1]}]"],
        [],
        None,
        {"distro": list(distro), "packages": sorted(depends or [])},
    )
    stages = [fetch, patch, deps]
    previous = patch
    for step in recipe.steps:
        # only what changes the compile: which files to collect is the package stage's
        # business, so correcting a glob re-collects in seconds instead of recompiling
        build = _stage(
            f"build-{step.name}",
            f"run {' '.join(step.argv)} in {step.cwd} (controlled environment, logged)",
            [str(workspace.source_tree) + " (patched)"]
            + ([f"the packages of {previous.name}"] if previous.name.startswith("build-") else []),
            [str(workspace.logs / f"build-{step.name}.<attempt>.log"), str(records / "build.json")],
            "build",
            {
                "step": step.name,
                "cwd": step.cwd,
                "argv": list(step.argv),
                "distro": list(distro),
                "toolchain": dict(sorted(toolchain.items())),
                # what makes two builds alike: the tree at one path, that path mapped away
                "tree": str(WORK_INSIDE),
                "flags": f"-ffile-prefix-map={WORK_INSIDE / 'src'}=.",
            },
            [previous],
        )
        stages.append(build)
        previous = build
    builds = [s for s in stages if s.name.startswith("build-")]
    package = _stage(
        "package",
        "collect the .deb files, read their control fields, compare with the expected set",
        [str(records / "build.json")]
        + [str(workspace.source_tree / s.cwd / glob) for s in recipe.steps for glob in s.packages],
        [str(workspace.packages), str(records / "packages.json")],
        "packages",
        {
            "collect": {
                s.name: {
                    "cwd": s.cwd,
                    "packages": list(s.packages),
                    "produces": list(s.produces),
                    "choose": dict(s.choose),
                }
                for s in recipe.steps
            },
            "expected": sorted(recipe.produced_packages()),
            # how the published files are rewritten (debs/normalize.py)
            "normalize": "name order, root:root, umask 022, mtime <= SOURCE_DATE_EPOCH",
        },
        builds,
    )
    return _finish(
        recipe, workspace, stages, package, patches, (distro, toolchain, host), environment
    )


def _download(recipe: Recipe, workspace: Workspace) -> Stage:
    """A distro stack's package stage: nothing to fetch, patch or build; downloaded."""
    stack = recipe.distro
    assert stack is not None
    records = workspace.records
    return _stage(
        "package",
        f"download the pinned versions from {stack.url} {stack.suite} (or the site's mirror) "
        "and check each against the sha256 of the recipe or lock.json",
        [f"{p.package}={p.version} (sha256 {p.sha256})" for p in stack.packages],
        [str(workspace.packages), str(records / "packages.json"), str(records / "lock.json")],
        "packages",
        {
            "distro": {
                "url": stack.url,
                "suite": stack.suite,
                "components": list(stack.components),
                "signed_by": stack.signed_by,
                "architecture": stack.architecture,
                "packages": [
                    {"package": p.package, "version": p.version, "sha256": p.sha256}
                    for p in stack.packages
                ],
                "left_out": {p.package: p.version for p in stack.left_out},
            }
        },
    )


def _finish(
    recipe: Recipe,
    workspace: Workspace,
    stages: list[Stage],
    package: Stage,
    patches: Sequence[Patch],
    where: tuple[tuple[str, str], Mapping[str, str], HostFacts],
    environment: EnvironmentSpec | None,
) -> Plan:
    """audit, report, install and validate: the same for built and prebuilt packages;
    `where`: the distro built in, its toolchain and the host."""
    distro, toolchain, host = where
    records = workspace.records
    runtime: dict[str, object] = {}
    if recipe.hosts.runtime == "container":  # the Containerfile is the audit's output too
        runtime = {
            "runtime": {"image": recipe.hosts.runtime_image, "order": list(recipe.install_order)}
        }
    audit = _stage(
        "audit",
        "prove that no package carries a kernel module, DKMS tree, firmware or module loader",
        [str(records / "packages.json")],
        [str(records / "audit.json")]
        + ([str(records / "container/Containerfile")] if runtime else []),
        "audit",
        # the justification too: audit.json and the report show it
        {
            "waivers": [
                {"rule": w.name, "package": w.package, "justification": w.justification}
                for w in recipe.waivers
            ],
            **runtime,
        },
        [package],
    )
    install = _stage(
        "install",
        "install the audited packages in order (only with --yes)",
        [str(records / "audit.json")],
        [str(records / "install.json")],
        "install",
        {"order": list(recipe.install_order)},
        [audit],
        on_request=True,
    )
    validate = _stage(
        "validate",
        f"hardware gates: {', '.join(recipe.validation.gates)}",
        [str(records / "install.json") + " (when present)"],
        [str(records / "validation.json"), str(records / "bench")],
        "validation",
        {"gates": list(recipe.validation.gates)},
        on_request=True,
    )
    report = _stage(
        "report",
        "render BUILD_REPORT.md (and its JSON twin) from the records",
        [str(records / "*.json")],
        [str(records / "BUILD_REPORT.md"), str(records / "BUILD_REPORT.json")],
        None,
        {},
        [audit],
    )
    stages = [*stages, package, audit, report, install, validate]
    return Plan(
        target=recipe.name,
        recipe=recipe,
        patches=tuple(patches),
        stages=tuple(stages),
        distro=distro,
        toolchain=tuple(sorted(toolchain.items())),
        host=host,
        environment=environment,
    )


def stage_status(
    stage: Stage, recorded: Mapping[str, Any] | None, failed: str | None = None
) -> tuple[bool, str]:
    """(up to date, why) from the record the stage wrote last time (None: no record);
    `failed` ("failed last time at build-xrt (when)") replaces "never run" when given."""
    if stage.record is None:
        return False, "runs every time" + (f"; {failed}" if failed else "")
    fresh, why = _record_status(stage, recorded)
    if fresh or failed is None:
        return fresh, why
    if recorded is None:
        return False, failed
    return False, f"{why}; {failed}"


def _record_status(stage: Stage, recorded: Mapping[str, Any] | None) -> tuple[bool, str]:
    if recorded is None:
        return False, "never run (no record)"
    fingerprints = recorded.get("fingerprints", {})
    state = str(recorded.get("state", ""))
    if stage.name == "install" and state.startswith("rolled back"):
        # what it installed is gone again: nothing of it is current
        return False, f"{state} from {recorded.get('root', '?')}"
    if fingerprints.get(stage.name) == stage.fingerprint:
        root = recorded.get("root") if stage.name == "install" else None
        return True, f"up to date (installed into {root})" if root else "up to date"
    previous = recorded.get("inputs", {}).get(stage.name)
    if not isinstance(previous, dict):
        return False, "never run (not in its record yet)"
    changed = changed_inputs(stage.inputs, previous)
    return False, "inputs changed: " + (", ".join(changed) if changed else "fingerprint format")


def changed_inputs(
    now: Mapping[str, Any], before: Mapping[str, Any], prefix: str = ""
) -> list[str]:
    """Names of the inputs that differ, descending into nested mappings."""
    names = []
    for key in sorted(set(now) | set(before)):
        a, b = now.get(key), before.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            names.extend(changed_inputs(a, b, f"{prefix}{key}."))
        else:
            names.append(f"{prefix}{key}")
    return names
