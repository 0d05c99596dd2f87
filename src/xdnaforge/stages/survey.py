"""The `doit survey` command: read the fetched tree's CMake files, map linked libraries to
packages inside the environment, write survey.json, print the warnings.

Edge: reads files and the lock record, asks dpkg inside the environment (the host or a
root entered with bwrap) which package ships `lib<name>.so` and what the dependency list
pulls in; without dpkg there a static table names the usual packages, and the record says
which was used. Builds nothing and changes nothing but survey.json.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.environments.proof_sandbox import Sandbox
from xdnaforge.environments.snapshot_tree import Missing, assemble
from xdnaforge.errors import StageFailed, ToolNotFound
from xdnaforge.process.run import run
from xdnaforge.sources.survey import Finding, Survey, flag_variables, link_findings, survey_tree
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_record

# -l<name> -> Debian package, for when the environment cannot be asked
STATIC_PACKAGES = {
    "crypt": "libcrypt-dev",
    "uuid": "uuid-dev",
    "dl": "libc6-dev",
    "pthread": "libc6-dev",
    "rt": "libc6-dev",
    "m": "libc6-dev",
    "drm": "libdrm-dev",
    "elf": "libelf-dev",
    "dw": "libdw-dev",
    "ssl": "libssl-dev",
    "crypto": "libssl-dev",
    "curl": "libcurl4-openssl-dev",
    "yaml": "libyaml-dev",
    "udev": "libudev-dev",
    "systemd": "libsystemd-dev",
    "ncurses": "libncurses-dev",
    "OpenCL": "ocl-icd-opencl-dev",
    "ffi": "libffi-dev",
    "z": "zlib1g-dev",
    "protobuf": "libprotobuf-dev",
    "gtest": "libgtest-dev",
    "png": "libpng-dev",
    "jpeg": "libjpeg-dev",
    "tiff": "libtiff-dev",
}
# what a C/C++ compiler brings with it (gcc/g++ depend on them)
IMPLIED = {"libc6-dev", "linux-libc-dev", "libstdc++-dev", "libgcc-dev"}
_DPKG_S_RE = re.compile(r"^([^:,\s]+)(?::[a-z0-9]+)?(?:, [^:]+)*: .*/lib(.+)\.(?:so|a)$")


def _static(library: str) -> str | None:
    if library.startswith("boost_"):
        return f"libboost-{library[6:].replace('_', '-')}-dev"
    return STATIC_PACKAGES.get(library)


def parse_dpkg_search(text: str) -> dict[str, str]:
    """`dpkg -S` lines `pkg[:arch]: /path/libNAME.so` -> {NAME: pkg}."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _DPKG_S_RE.match(line.strip())
        if match:
            found.setdefault(match.group(2), match.group(1))
    return found


def dependency_closure(status: str, start: Iterable[str]) -> set[str]:
    """Every package `start` pulls in, from `dpkg-query -W` lines Package\\tDepends\\tProvides."""
    depends: dict[str, set[str]] = {}
    for line in status.splitlines():
        fields = line.split("\t")
        if len(fields) < 3:
            continue
        name, requires, provides = fields[0], fields[1], fields[2]
        names = {re.split(r"[\s(:]", part.strip())[0] for part in re.split(r"[,|]", requires)}
        depends.setdefault(name, set()).update(n for n in names if n)
        for virtual in re.split(r",", provides):
            virtual_name = re.split(r"[\s(]", virtual.strip())[0]
            if virtual_name:
                depends.setdefault(virtual_name, set()).add(name)
    seen: set[str] = set()
    todo = list(start)
    while todo:
        package = todo.pop()
        if package in seen:
            continue
        seen.add(package)
        todo.extend(depends.get(package, ()))
    return seen


def _ask(sandbox: Sandbox, argv: list[str], log: Path) -> str | None:
    """Run a query inside the environment; None when it cannot run there."""
    command = [*sandbox.wrapper(cwd=Path("/")), *argv]
    try:
        result = run(command, cwd=Path("/"), timeout=120, log_file=log, ok_codes=(0, 1, 2))
    except ToolNotFound:
        return None
    if result.returncode == 2 or "bwrap:" in result.stderr:
        return None
    return result.stdout


def _roots(project: Project, target: str, tree: Path) -> list[tuple[str, dict[str, str]]]:
    """Each build step's configure root (build.sh in <dir>/build configures .. or ../src)."""
    roots = []
    for step in project.recipes[target].steps:
        parent = posixpath.normpath(posixpath.join(step.cwd, ".."))
        for candidate in (parent, posixpath.join(parent, "src")):
            if (tree / candidate / "CMakeLists.txt").is_file():
                roots.append((posixpath.normpath(candidate), flag_variables(step.argv)))
                break
    return roots


def survey_target(project: Project, target: str, workspace: Workspace, sandbox: Sandbox) -> None:
    recipe = project.recipes[target]
    if recipe.kind != "source":
        raise StageFailed(f"{target} is a prebuilt recipe: there is no source tree to survey")
    tree = workspace.source_tree
    lock = read_record(workspace.record("lock"))
    absent: list[Missing] = []
    if lock is None or not tree.is_dir():
        # no fetch could make a tree: survey what the local snapshots hold, and say what not
        tree = workspace.work / "survey" / "tree"
        absent = assemble(recipe, project.site, tree, workspace.logs / "survey-tree.log")
        if any(m.path == "." for m in absent):
            raise StageFailed(
                f"{target}: no fetched tree to survey, and no local snapshot holds "
                f"{recipe.pinned.url} at {recipe.pinned.commit}",
                hint=f"run `doit fetch --target {target}`, or name a mirror in site.yaml",
            )
        lock = {}
    missing = [
        posixpath.join(repository, name) if repository != "." else name
        for repository, names in (lock.get("missing_files") or {}).items()
        for name in names
    ]
    skip = tuple(u.path for u in recipe.pinned.unused_submodules)

    def read(path: str) -> str | None:
        try:
            return (tree / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    merged = Survey()
    seen: set[tuple[str, str]] = set()
    # what XRT's CMake reads from /etc/os-release (CMake/settings.cmake): the recipe's distro
    identity = {
        "LINUX_FLAVOR": recipe.hosts.distro_id,
        "LINUX_VERSION": recipe.hosts.distro_version,
    }
    for root, flags in _roots(project, target, tree):
        variables = {**identity, **flags}
        switches = tuple(k for k in flags if "WERROR" in k)
        part = survey_tree([root], read, variables=variables, skip=skip, switches=switches)
        for finding in part.findings:
            if (finding.where, finding.kind) not in seen:
                seen.add((finding.where, finding.kind))
                merged.findings.append(finding)
        merged.files_read += [f for f in part.files_read if f not in merged.files_read]
        merged.not_found += [f for f in part.not_found if f not in merged.not_found]
        merged.targets |= part.targets
        for name, places in part.libraries.items():
            merged.libraries.setdefault(name, []).extend(places)
    log = workspace.logs / "survey.log"
    log.unlink(missing_ok=True)
    depends = recipe.depends_for(recipe.hosts.distro_id, recipe.hosts.distro_version) or ()
    names = sorted(n for n in merged.libraries if n not in merged.targets)
    patterns = [p for n in names for p in (f"*/lib{n}.so", f"*/lib{n}.a")]
    searched = _ask(sandbox, ["dpkg", "-S", *patterns], log) if patterns else ""
    status = _ask(
        sandbox,
        ["dpkg-query", "-W", "-f", "${Package}\\t${Depends}, ${Pre-Depends}\\t${Provides}\\n"],
        log,
    )
    if searched is not None and status is not None:
        found = parse_dpkg_search(searched)
        packages = {n: found.get(n) or _static(n) for n in names}
        provided = dependency_closure(status, [*depends, "gcc", "g++"]) | IMPLIED
        how = f"dpkg -S in {sandbox.name}"
    else:
        packages = {n: _static(n) for n in names}
        provided = set(depends) | IMPLIED
        how = f"static table; dpkg could not be asked in {sandbox.name}"
    findings = merged.findings + link_findings(merged, packages, provided, how)
    body: dict[str, Any] = {
        "target": target,
        "recipe_sha256": recipe.digest,
        "environment": sandbox.name,
        "library_mapping": how,
        "roots": [root for root, _ in _roots(project, target, tree)],
        # the tree as fetched, with these patches applied by `doit patch` (none: at the pins)
        "patches_in_tree": [
            f"{p['set']}/{p['file']}"
            for p in lock.get("patches", [])
            if p.get("status") == "applied"
        ],
        "skipped": list(skip),
        "files_read": len(merged.files_read),
        "not_found": merged.not_found,
        "missing_from_mirror": missing,
        # nested repositories no local snapshot holds (the tree was assembled from them)
        "missing_repositories": [
            {"path": m.path, "commit": m.commit, "url": m.url} for m in absent
        ],
        "findings": [_as_dict(f) for f in findings],
        "warnings": sum(1 for f in findings if f.warning),
    }
    write_record(workspace.record("survey"), "survey", body)
    roots = ", ".join(body["roots"])
    print(f"survey {target}: {len(merged.files_read)} CMake files read from {roots}")
    for finding in findings:
        mark = "warning" if finding.warning else "info"
        print(f"  {mark}: {finding.where}: {finding.message}")
    for path in merged.not_found:
        print(f"  not readable: {path}" + (" (missing from the mirror)" if path in missing else ""))
    if missing:
        print(f"  files missing from a partial mirror: {', '.join(missing)}")
    for item in absent:
        print(f"  not surveyed: {item.describe()}")
    print(f"  {body['warnings']} warning(s); libraries mapped by {how}")


def _as_dict(finding: Finding) -> dict[str, Any]:
    return {
        "kind": finding.kind,
        "where": finding.where,
        "message": finding.message,
        "warning": finding.warning,
    }


def survey_warnings(workspace: Workspace, recipe_digest: str) -> tuple[list[str], bool] | None:
    """The warnings of the last survey (for `doit plan`) and whether the recipe changed
    since it ran; None when there is no survey."""
    record = read_record(workspace.record("survey"))
    if record is None:
        return None
    warnings = [
        f"{f['where']}: {f['message']}" for f in record.get("findings", []) if f.get("warning")
    ]
    return warnings, record.get("recipe_sha256") != recipe_digest
