"""BUILD_REPORT.md and its JSON twin, from the records only; nothing is typed by hand.

`build_model` is pure (records in, plain data out, deterministic order); `render_markdown`
fills the jinja2 template with StrictUndefined, so a missing field is an error, not a blank.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import jinja2

from xdnaforge.state.failure import attempts_seconds


def _environment(build: Mapping[str, Any]) -> dict[str, Any]:
    """Where the build ran, in one line, and whether it was a twin."""
    env = build.get("environment") or {}
    if not env or env.get("kind") == "host":
        return {"text": "host" if build else "not built", "twin": False}
    text = (
        f"{env.get('description', env.get('name'))}, network {env.get('network')}, "
        f"env.json {_short(env.get('env_json_sha256'))}"
    )
    return {"text": text, "twin": bool(env.get("twin"))}


def _reproducible(rebuild: Mapping[str, Any] | None) -> str:
    """The verdict and what it rests on: which builds, where their trees were, how compared."""
    if rebuild is None:
        return "not checked (doit rebuild-check)"
    verdict = (
        "yes" if rebuild.get("reproducible") else f"no ({rebuild.get('differing_files', 0)} files)"
    )
    if "compared" not in rebuild:
        return verdict  # a record written before the comparison said how
    if rebuild.get("buildinfo"):
        # rebuild-check --buildinfo: someone else's packages against a rebuild here
        built = rebuild.get("buildinfo_built", {})
        differing = sum(1 for p in rebuild.get("packages", []) if not p.get("identical"))
        said = "yes" if rebuild.get("reproducible") else f"no ({differing} packages)"
        return (
            f"{said}: {rebuild.get('verdict', '')}; {rebuild['compared']} "
            f"({rebuild['buildinfo']}, built {built.get('date', '?')} at {built.get('path', '?')})"
            f", rebuilt in {rebuild.get('second_build', '?')} with an empty ccache"
        )
    inside = rebuild.get("tree_inside", {})
    return (
        f"{verdict}: {rebuild['compared']}, built in {rebuild.get('first_build', '?')} and "
        f"{rebuild.get('second_build', '?')} (trees seen at {inside.get('first', '?')} and "
        f"{inside.get('second', '?')}; the second with an empty ccache)"
    )


def _failed_build(failure: Mapping[str, Any] | None) -> str | None:
    """ "build-xrt failed after 762 s in 2 attempts" for a build step that failed."""
    if not failure or not str(failure.get("stage", "")).startswith("build-"):
        return None
    attempts = failure.get("attempts") or []
    seconds = attempts_seconds(attempts)
    return f"{failure['stage']} failed after {round(seconds)} s in {len(attempts)} attempt(s)"


def _installed(install: Mapping[str, Any] | None) -> str:
    """The install's state with the root it concerns ("installed into /srv/root")."""
    if not install:
        return "not installed"
    state = str(install.get("state", "not installed"))
    root = install.get("root")
    if not root:
        return state
    return f"{state} {'from' if state.startswith('rolled back') else 'into'} {root}"


def _rebuild_causes(rebuild: Mapping[str, Any] | None) -> list[dict[str, str]]:
    """One row per file that differs between the two builds: package, file, cause, detail."""
    rows = []
    for package in (rebuild or {}).get("packages", []):
        for cause in package.get("causes", []):
            rows.append({"package": package["package"], **cause})
    return rows


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "-"


def _pyxrt_rows(
    pyxrt: Mapping[str, Any] | None, validation: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """The bindings `doit pyxrt` built, each with what the last pyxrt gate said of it."""
    gates = [g for g in (validation or {}).get("gates", []) if g.get("name") == "pyxrt"]
    evidence = gates[0].get("evidence", []) if gates else []
    rows = []
    for binding in (pyxrt or {}).get("bindings", []):
        said = [
            line.removeprefix(f"{binding['python']}: ")
            for line in evidence
            if line.startswith(f"{binding['python']}: ") and "from `doit pyxrt`" not in line
        ]
        if not gates:
            gate = "not validated yet"
        elif gates[0].get("status") == "skip":
            gate = f"skipped: {gates[0].get('summary', '')}"
        elif said:
            gate = said[-1]
        else:
            gate = "not tried (validated before this binding was built)"
        rows.append({**binding, "gate": gate})
    return rows


def _pyxrt_stack(validation: Mapping[str, Any] | None) -> str | None:
    """What the last pyxrt gate found of the stack's own bindings (python3-xrt's, ours)."""
    for gate in (validation or {}).get("gates", []):
        if gate.get("name") == "pyxrt":
            own = [e for e in gate.get("evidence", []) if e.startswith("the stack's own pyxrt")]
            return own[0] if own else None
    return None


def _audit_rows(audit: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for package in audit.get("packages", []):
        counts = Counter(f"{f['rule']} {f['severity']}" for f in package.get("findings", []))
        rows.append(
            {
                "package": package["package"],
                "verdict": package["verdict"],
                "findings": [f"{key} x{n}" if n > 1 else key for key, n in sorted(counts.items())],
                "waived": sorted(
                    {
                        f"{f['rule']}: {f['waiver']}"
                        for f in package.get("findings", [])
                        if f.get("waiver")
                    }
                ),
            }
        )
    return rows


def _changes(now: Mapping[str, Any], before: Mapping[str, Any] | None) -> list[str]:
    """What differs from the previous report, in words."""
    if before is None:
        return ["first report for this target"]
    changes = []
    pins_now = {r["path"]: r["resolved"] for r in now["sources"]}
    pins_before = {r["path"]: r["resolved"] for r in before.get("sources", [])}
    for path in sorted(set(pins_now) | set(pins_before)):
        if pins_now.get(path) != pins_before.get(path):
            changes.append(
                f"source {path}: {_short(pins_before.get(path))} -> {_short(pins_now.get(path))}"
            )
    patches_now = {p["file"]: p["sha256"] for p in now["patches"]}
    patches_before = {p["file"]: p["sha256"] for p in before.get("patches", [])}
    for file in sorted(set(patches_now) | set(patches_before)):
        if patches_now.get(file) != patches_before.get(file):
            state = (
                "added"
                if file not in patches_before
                else "removed"
                if file not in patches_now
                else "changed"
            )
            changes.append(f"patch {file} {state}")
    packages_now = {p["package"]: p for p in now["packages"]}
    packages_before = {p["package"]: p for p in before.get("packages", [])}
    for name in sorted(set(packages_now) | set(packages_before)):
        a, b = packages_before.get(name), packages_now.get(name)
        if a is None or b is None:
            changes.append(f"package {name} {'added' if a is None else 'removed'}")
        elif a["sha256"] != b["sha256"]:
            changes.append(
                f"package {name} rebuilt: {a['version']} -> {b['version']} "
                f"({_short(a['sha256'])} -> {_short(b['sha256'])})"
            )
    for key in ("audit_verdict", "validation_verdict", "installed"):
        if now.get(key) != before.get(key):
            changes.append(f"{key.replace('_', ' ')}: {before.get(key)} -> {now.get(key)}")
    metrics_now = {m["name"]: m["value"] for m in now.get("metrics", [])}
    metrics_before = {m["name"]: m["value"] for m in before.get("metrics", [])}
    for name in sorted(set(metrics_now) & set(metrics_before)):
        if metrics_now[name] != metrics_before[name]:
            changes.append(f"{name}: {metrics_before[name]} -> {metrics_now[name]}")
    return changes or ["nothing changed since the previous report"]


def _attempts(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every attempt of a build step; records older than attempts held only the last one."""
    attempts: list[Mapping[str, Any]] = step.get("attempts") or [
        {
            "argv": step.get("command", []),
            "started": step.get("started", "-"),
            "finished": step.get("finished", "-"),
            "exit_status": step.get("exit_status", "-"),
            "log": step.get("log", "-"),
        }
    ]
    return attempts


def _recipe(
    target: str,
    packages: Mapping[str, Any],
    build: Mapping[str, Any],
    lock: Mapping[str, Any],
) -> dict[str, Any]:
    """The recipe the packages were made from (lock.json's is only refreshed by a fetch)."""
    unknown = {"name": target, "origin": "-", "sha256": "-"}
    made = packages.get("recipe") or build.get("recipe") or lock.get("recipe") or unknown
    compiled = build.get("recipe") or {}
    return {
        **made,
        # the packages were re-collected with an edited recipe that did not change the compile
        "compiled_with": compiled.get("sha256")
        if compiled.get("sha256") not in (None, made.get("sha256"))
        else None,
    }


def build_model(
    target: str,
    records: Mapping[str, Mapping[str, Any] | None],
    previous: Mapping[str, Any] | None,
    generated: str,
    version: str,
) -> dict[str, Any]:
    lock = records.get("lock") or {}
    build = records.get("build") or {}
    packages = records.get("packages") or {}
    audit = records.get("audit") or {}
    install = records.get("install")
    validation = records.get("validation")
    bench = records.get("bench")
    steps = [
        {"name": name, **step, "attempts": _attempts(step)}
        for name, step in sorted(
            build.get("steps", {}).items(), key=lambda item: item[1].get("started", "")
        )
    ]
    repositories = lock.get("repositories", [])
    pinned = sum(1 for r in repositories if r.get("pinned"))
    model: dict[str, Any] = {
        "target": target,
        "generated": generated,
        "xdnaforge": version,
        "recipe": _recipe(target, packages, build, lock),
        "pinned": pinned,
        "recorded_by_parent": len(repositories) - pinned,
        "failure": records.get("failure"),
        "host": build.get("host") or (validation or {}).get("host") or {},
        "toolchain": sorted((build.get("toolchain") or {}).items()),
        "sources": lock.get("repositories", []),
        # a distro stack: the archive and each package's digest as pinned or first seen
        "archive": lock.get("archive"),
        "archive_packages": sorted((lock.get("packages") or {}).items()),
        "left_out": packages.get("left_out") or [],
        "left_out_audit": audit.get("left_out") or [],
        "unused_submodules": lock.get("unused_submodules", []),
        "missing_files": sorted((lock.get("missing_files") or {}).items()),
        "patches": lock.get("patches", []),
        "steps": steps,
        "failed_build": _failed_build(records.get("failure")),
        "packages": sorted(packages.get("packages", []), key=lambda p: p["package"]),
        "audit_verdict": audit.get("verdict", "not run"),
        "audit": _audit_rows(audit),
        "waivers": audit.get("waivers", []),
        "audit_errors": audit.get("errors", []),
        "installed": _installed(install),
        "install": install,
        "validation_verdict": (validation or {}).get("verdict", "not run"),
        "validation": validation,
        "pyxrt": _pyxrt_rows(records.get("pyxrt"), validation),
        "pyxrt_stack": _pyxrt_stack(validation),
        "metrics": (bench or {}).get("latest_metrics", []),
        "bench": bench,
        "kernel": records.get("kernel"),
        "host_compat": records.get("hostcompat"),
        "matrix": records.get("matrix"),
        "environment": _environment(build),
        "reproducible": _reproducible(records.get("rebuild")),
        "rebuild": records.get("rebuild"),
        "rebuild_causes": _rebuild_causes(records.get("rebuild")),
    }
    model["changes"] = _changes(model, previous)
    proofs = _proofs(records.get("prove"))
    model["proofs"] = proofs
    model["compat"] = [entry for entry in proofs.values() if entry["kind"] != "patch"]
    return model


def _proofs(prove: Mapping[str, Any] | None) -> dict[str, dict[str, str]]:
    """The "proven on" text of each change by id ("<set>/<file>" for a patch)."""
    if not prove:
        return {}
    # "Ubuntu 26.04 (GCC 15.2.0, Boost 1.90.0, CMake 4.2.3)", read from the root proven in
    place = prove.get("environment", {})
    environment = place.get("label") or place.get("name", "?")
    table = {}
    for entry in prove.get("changes", []):
        outcome = entry["outcome"]
        if outcome == "proven":
            text = f"proven on {environment}"
        elif outcome == "not needed":
            text = f"not needed on {environment}"
        else:
            text = (
                entry["detail"]
                if outcome in ("not provable here", "no proof")
                else (f"{outcome.upper()} on {environment}: {entry['detail']}")
            )
        table[entry["id"]] = {"kind": entry["kind"], "change": entry["change"], "text": text}
    return table


def render_markdown(model: Mapping[str, Any]) -> str:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("xdnaforge.report", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # Markdown, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return environment.get_template("BUILD_REPORT.md.j2").render(model=model, short=_short)
