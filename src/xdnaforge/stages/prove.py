"""The `doit prove` command: pick the environment, prove every change, write prove.json.

Edge: reads the fetched tree and the environment, writes artifacts/<target>/prove.json and
prints one line per change. A failing proof (broken, wrong error, timeout) fails the command
after the record is written; "not provable here" and "no proof" are shown, never passed.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from xdnaforge.config.envspec import choose_environment
from xdnaforge.config.project import Project
from xdnaforge.environments import local as environment
from xdnaforge.environments.proof_run import (
    changes_of,
    pristine_copy,
    prove_changes,
    toolchain_facts,
)
from xdnaforge.environments.proof_sandbox import HOST, Sandbox
from xdnaforge.environments.snapshot_tree import Missing, assemble
from xdnaforge.errors import StageFailed, UsageError
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import write_record


def recipe_sandbox(project: Project, target: str, host: tuple[str, str]) -> Sandbox:
    """The recipe's build environment (build.environment + the site's entry), as `doit build`
    uses it: the host, or the root `doit env` made under build/envs/."""
    recipe = project.recipes[target]
    if recipe.environment is None:
        return Sandbox(name="host", root=HOST)
    spec = choose_environment(recipe.environment, host, project.site.environments)
    if spec.kind == "host":
        return Sandbox(name=spec.describe(), root=HOST)
    if spec.kind != "rootfs":
        raise UsageError(
            f"environment {spec.describe()}: proofs run on the host or in a rootfs",
            hint="give a root file system with --env-root DIR",
        )
    root = environment.place(project.site, spec).root.resolve()
    if not (root / "usr/bin").is_dir():
        raise UsageError(
            f"environment {spec.describe()}: not created yet ({root})",
            hint=f"create it: doit env --target {target} --yes (or give --env-root DIR)",
        )
    tools = {"cc": dict(spec.compilers).get("CC", ""), "cxx": dict(spec.compilers).get("CXX", "")}
    return Sandbox(name=spec.describe(), root=root, tools={k: v for k, v in tools.items() if v})


def make_sandbox(env_root: str, env_name: str, cc: str, cxx: str) -> Sandbox:
    """The environment named on the command line (the host when no root is given)."""
    root = Path(env_root).resolve() if env_root else HOST
    if root != HOST and not (root / "usr/bin").is_dir():
        raise UsageError(
            f"--env-root {env_root}: not a root file system (no usr/bin)",
            hint="give the directory a debootstrap made, e.g. build/envs/ubuntu-26.04",
        )
    name = env_name or ("host" if root == HOST else f"rootfs {root}")
    tools = {key: value for key, value in (("cc", cc), ("cxx", cxx)) if value}
    return Sandbox(name=name, root=root, tools=tools)


def _os_release(sandbox: Sandbox) -> str:
    try:
        text = sandbox.host_path("/etc/os-release").read_text(encoding="utf-8")
    except OSError:
        return "unknown (no /etc/os-release)"
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.partition("=")[2].strip().strip('"')
    return "unknown"


def versions(toolchain: dict[str, str], boost_header: str | None) -> dict[str, str]:
    """GCC, Boost and CMake versions from the tools' first --version lines and Boost's
    version.hpp (`#define BOOST_VERSION 109000`); pure. A tool that is missing is left out."""
    found: dict[str, str] = {}
    cc = toolchain.get("cc", "")
    gcc = re.match(r"gcc \(.*\) (\d[\w.]*)$", cc) or re.match(r"gcc .*?(\d+\.\d[\w.]*)$", cc)
    if gcc:
        found["GCC"] = gcc.group(1)
    match = re.search(r"#define BOOST_VERSION (\d+)", boost_header or "")
    if match:
        number = int(match.group(1))
        found["Boost"] = f"{number // 100000}.{number // 100 % 1000}.{number % 100}"
    cmake = re.match(r"cmake version (\S+)", toolchain.get("cmake", ""))
    if cmake:
        found["CMake"] = cmake.group(1)
    return found


def label(os_release: str, found: dict[str, str]) -> str:
    """`Ubuntu 26.04 (GCC 15.2.0, Boost 1.90.0, CMake 4.2.3)`: where a change was proven."""
    fields = dict(line.split("=", 1) for line in os_release.splitlines() if "=" in line)
    name = fields.get("NAME", "").strip('"')
    version = fields.get("VERSION_ID", "").strip('"')
    where = f"{name} {version}".strip() or "unknown"
    if "XDNAFORGE_TWIN_OF" in fields:
        where += f" (twin on {fields['XDNAFORGE_TWIN_OF'].strip(chr(34))})"
    tools = ", ".join(f"{k} {v}" for k, v in found.items())
    return f"{where} ({tools})" if tools else where


def _read(sandbox: Sandbox, path: str) -> str | None:
    try:
        return sandbox.host_path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def prove_target(
    project: Project, target: str, workspace: Workspace, sandbox: Sandbox, timeout: float
) -> None:
    recipe = project.recipes[target]
    if recipe.kind != "source":
        raise UsageError(f"{target} is a prebuilt recipe: it has no changes to prove")
    patches = project.patches_for(recipe)
    changes = changes_of(recipe, patches)
    work = workspace.work / "prove"
    log = workspace.logs / "prove.log"
    log.unlink(missing_ok=True)
    tree = work / "tree"
    missing: list[Missing] = []
    if (workspace.source_tree / ".git").exists():
        pristine_copy(workspace.source_tree, patches, tree, log)
        made_from = f"the fetched tree {workspace.source_tree}"
    else:
        # no fetch could make a tree (a nested commit no mirror holds): prove what the local
        # snapshots hold, and say which changes their missing repositories leave unprovable
        missing = assemble(recipe, project.site, tree, log)
        if any(m.path == "." for m in missing):
            raise StageFailed(
                f"{workspace.source_tree} has no checked-out tree to prove on, and no local "
                f"snapshot holds {recipe.pinned.url} at {recipe.pinned.commit}",
                hint=f"run `doit fetch --target {target}` first, or name a mirror in site.yaml",
            )
        made_from = "the local snapshots (site.yaml mirrors; no fetched tree)"
        for item in missing:
            print(f"  {item.describe()}")
    readonly = [project.site.cache_dir] + [
        Path(mirror) for _, mirror in project.site.mirrors if Path(mirror).is_dir()
    ]
    facts = toolchain_facts(sandbox, work, log)
    found = versions(facts, _read(sandbox, "/usr/include/boost/version.hpp"))
    entries = prove_changes(
        changes,
        sandbox,
        tree=tree,
        work=work,
        readonly=readonly,
        timeout=timeout,
        log=log,
        missing=missing,
    )
    write_record(
        workspace.record("prove"),
        "prove",
        {
            "target": target,
            "environment": {
                "name": sandbox.name,
                "root": str(sandbox.root),
                "os_release": _os_release(sandbox),
                "toolchain": facts,
                # read from the root: what the report's "proven on" line says
                "versions": found,
                "label": label(_read(sandbox, "/etc/os-release") or "", found),
            },
            "tree": made_from,
            "missing_repositories": [
                {"path": m.path, "commit": m.commit, "url": m.url} for m in missing
            ],
            "changes": entries,
            "log": str(log),
        },
    )
    print(f"prove {target} on {sandbox.name} ({_os_release(sandbox)})")
    for key, value in facts.items():
        print(f"  {key}: {value}")
    for entry in entries:
        detail = entry["detail"]
        said = detail if detail.startswith(entry["outcome"]) else f"{entry['outcome']}: {detail}"
        print(f"  {entry['id']}: {said}")
        if entry["first_error"]:
            print(f"      first error: {entry['first_error']}")
    counts = Counter(entry["outcome"] for entry in entries)
    print("  " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())))
    failing = [entry["id"] for entry in entries if entry["failed"]]
    if failing:
        raise StageFailed(
            f"{len(failing)} change(s) failed their proof: {', '.join(failing)}",
            hint=f"see {workspace.record('prove')} and {log}",
        )
