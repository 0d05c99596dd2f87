"""The doit action bodies of the fleet tasks (publish, lava-job, lava-results, ci-workflow,
fleet-report); each gathers inputs and hands them to the fleet modules. Edge module."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from xdnaforge import yamlfile
from xdnaforge.actions import lazy
from xdnaforge.actions.pipeline import guarded
from xdnaforge.actions.target import build_dir_lock, resolve, workspace
from xdnaforge.config.project import Project
from xdnaforge.errors import StageFailed, UsageError
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_atomic, write_record

# imported when a fleet command runs (see actions/lazy.py)
if TYPE_CHECKING:
    from xdnaforge.fleet import fleet_report, lava, workflow
    from xdnaforge.fleet import lava_results as lava_results_module
    from xdnaforge.fleet import publish as publish_module
    from xdnaforge.stages import validate as stage_validate
else:
    stage_validate = lazy.module("xdnaforge.stages.validate")
    fleet_report = lazy.module("xdnaforge.fleet.fleet_report")
    lava = lazy.module("xdnaforge.fleet.lava")
    workflow = lazy.module("xdnaforge.fleet.workflow")
    lava_results_module = lazy.module("xdnaforge.fleet.lava_results")
    publish_module = lazy.module("xdnaforge.fleet.publish")


@guarded
def publish(project: Project, target: str, snapshot: str) -> None:
    resolved = resolve(project, target or None)
    with build_dir_lock(project):
        publish_module.publish(project, resolved.workspace, snapshot or None)


def _lava_site_hint(missing: Sequence[str]) -> str:
    lines = "\n".join(f"    {key}: ..." for key in missing)
    return f"add to site.yaml:\n  fleet:\n{lines}\n(docs/configuration.md says what each is)"


@guarded
def lava_job(project: Project, target: str, device_type: str) -> None:
    """One LAVA job per matrix cell (of `target` only, when given)."""
    if device_type not in lava.DEVICE_TYPES:
        raise UsageError(
            f"unknown device type '{device_type}'",
            hint=f"choose one of {', '.join(lava.DEVICE_TYPES)}",
        )
    fleet = project.site.fleet
    missing = lava.missing_settings(fleet, device_type)
    if missing:
        raise UsageError(
            f"a LAVA job needs site.yaml fleet.{', fleet.'.join(missing)}",
            hint=_lava_site_hint(missing),
        )
    if target:
        resolve(project, target)  # an unknown name is a usage error
    cells = [c for c in project.cells() if not target or c.recipe == target]
    if not cells:
        raise UsageError(f"no matrix cell uses {target}", hint="see matrices/*.yaml")
    out = project.site.artifacts_dir / "lava"
    for cell in cells:
        recipe = project.recipes[cell.recipe]
        published = read_record(workspace(project, cell.recipe).record("publish")) or {}
        job = lava.job(cell, recipe, fleet, device_type, published.get("snapshot"))
        path = out / f"{cell.name}.{device_type}.yaml"
        write_atomic(path, yaml.safe_dump(job, sort_keys=False, width=100))
        print(f"{path}  (tags: {', '.join(job['tags'])})")
        if device_type == "docker":
            device = out / "devices" / f"{cell.name}.jinja2"
            write_atomic(device, lava.docker_device_dictionary(cell))
            print(f"{device}  (the docker device's dictionary: NPU node, memlock)")


@guarded
def lava_results(project: Project, host: str, files: Sequence[str]) -> None:
    """LAVA's results exports -> artifacts/fleet/<host>/<target>/ records per cell."""
    if not files:
        raise UsageError("name the results file: doit lava-results results.yaml")
    for file in files:
        _lava_results_file(project, Path(file), host)


def _lava_results_file(project: Project, path: Path, host: str) -> None:
    document = yamlfile.load(path)
    cases = lava_results_module.parse_cases(
        document.data, str(path), lambda index: document.where((index, "name"))[0]
    )
    names = lava_results_module.cells_in(cases)
    if not names:
        raise StageFailed(
            f"{path}: no xdnaforge test definition reported here "
            "(no suite named <n>_xdnaforge-<cell>)",
            hint="is this the export of a job `doit lava-job` wrote?",
        )
    known = {c.name: c for c in project.cells()}
    for name in names:
        cell = known.get(name)
        if cell is None:
            raise StageFailed(f"{path}: cell '{name}' is in no matrix", hint="see matrices/*.yaml")
        recipe = project.recipes[cell.recipe]
        job = next(c.job for c in cases if c.suite.endswith(f"_xdnaforge-{name}"))
        who = host or f"lava-job-{job}"
        space = Workspace(
            cell.recipe, project.site.build_dir, project.site.artifacts_dir / "fleet" / who
        )
        history = stage_validate.read_history(space)
        body, entry = lava_results_module.to_records(
            cases, cell, recipe, who, [h.get("metrics", {}) for h in history]
        )
        write_record(space.record("validation"), "validation", body)
        if entry is not None:
            stage_validate.append_history(space, entry)
        print(f"{name} on {who}: {body['verdict']} -> {space.record('validation')}")


def _host_records(directory: Path) -> list[fleet_report.HostRecords]:
    """A host's records: <dir>/<target>/{validation.json, bench/history.jsonl, kernel.json}.

    The host is named after the directory (its parent when it is an `artifacts` directory).
    """
    if not directory.is_dir():
        raise StageFailed(f"{directory}: no such directory", hint="--from takes a host's records")
    host = directory.resolve().parent.name if directory.name == "artifacts" else directory.name
    found = []
    for target_dir in sorted(p for p in directory.iterdir() if p.is_dir()):
        validation = read_record(target_dir / "validation.json")
        kernel = read_record(target_dir / "kernel.json")
        space = Workspace(target_dir.name, directory, directory)
        if validation is None and kernel is None:
            continue
        found.append(
            fleet_report.HostRecords(
                host=host,
                target=target_dir.name,
                validation=validation,
                history=stage_validate.read_history(space),
                kernel=kernel,
            )
        )
    return found


@guarded
def fleet_report_task(project: Project, sources: Sequence[str], dirs: Sequence[str]) -> None:
    """Merge host record directories into the fleet report (Markdown, JSON, HTML)."""
    chosen = [*sources, *dirs]
    if not chosen:
        raise UsageError(
            "name the hosts' record directories: doit fleet-report --from DIR [--from DIR ...]"
        )
    records = [r for d in chosen for r in _host_records(Path(d))]
    if not records:
        raise StageFailed(
            f"no validation.json or kernel.json under {', '.join(chosen)}",
            hint="each directory is a host's artifacts/: <target>/validation.json",
        )
    model = fleet_report.build_model(records, project.cells(), project.recipes)
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    out = project.site.artifacts_dir / "fleet-report"
    write_atomic(out / "FLEET_REPORT.md", fleet_report.render_markdown(model, now))
    write_atomic(out / "index.html", fleet_report.render_html(model, now))
    write_record(
        out / "FLEET_REPORT.json", "fleet-report", {"time": now, **fleet_report.as_json(model)}
    )
    for entry in model.entries:
        print(f"{entry.state.upper():13} {entry.cell} on {entry.host}: {entry.verdict}")
    print(f"{out / 'FLEET_REPORT.md'}, {out / 'FLEET_REPORT.json'}, {out / 'index.html'}")
    news = [e for e in model.entries if e.news]
    if news:
        # NEWS exits as `doit matrix` does (stages/matrix.py): the report is written first
        raise StageFailed(
            f"{len(news)} cell(s) on their hosts did not behave as the matrix expects: "
            + ", ".join(f"{e.cell} on {e.host}" for e in news),
            hint="update the matrix (expect, fails, gates, reason, evidence) or fix the cell",
        )


@guarded
def ci_workflow(project: Project) -> None:
    """The GitHub Actions workflow, for the user to copy into .github/workflows/."""
    fleet = project.site.fleet
    if not fleet.apt_url:
        raise UsageError(
            "the workflow's validate jobs install from the published repository, "
            "and site.yaml names no fleet.apt_url",
            hint=_lava_site_hint(["apt_url"]),
        )
    data = workflow.workflow(project.cells(), project.recipes, fleet.apt_url)
    path = project.site.artifacts_dir / "ci" / "xdnaforge-fleet.yml"
    header = (
        "# Written by `doit ci-workflow`: copy to .github/workflows/. Runners: hosted for the\n"
        "# builds; self-hosted `xdnaforge-publisher` (aptly root, signing key) and one per\n"
        "# cell labelled with its NPU generation and distro release.\n"
    )
    write_atomic(path, header + yaml.safe_dump(data, sort_keys=False, width=100))
    print(f"{path}: {len(data['jobs'])} jobs ({', '.join(data['jobs'])})")
    tracked = workflow.track_workflow(project.recipes)
    track_path = path.with_name("xdnaforge-track.yml")
    track_header = (
        "# Written by `doit ci-workflow`: copy to .github/workflows/. Weekly, per tracked line\n"
        "# (source.track): `doit track --check`; when the branch moved, `doit track` and a\n"
        "# pull request with the printed changes. The candidate stays unverified until a\n"
        "# maintainer takes it through docs/tracking.md.\n"
    )
    write_atomic(track_path, track_header + yaml.safe_dump(tracked, sort_keys=False, width=100))
    jobs = tracked["jobs"]
    print(f"{track_path}: {len(jobs)} jobs ({', '.join(jobs) or 'no recipe names source.track'})")
