"""A GitHub Actions workflow for the fleet; pure (returns plain data to dump as YAML).

`workflow` writes the fleet's: `build-<recipe>` on hosted runners (in a container of the
distro the recipe builds in), `publish` on a self-hosted runner labelled
`xdnaforge-publisher` (it keeps the aptly root, so snapshots and rollbacks persist, and the
signing key never leaves it),
`validate-<cell>` on self-hosted runners labelled with the cell's NPU generation and distro
release, and `fleet-report`, which merges what the validate jobs uploaded.
`track_workflow` writes a scheduled one: per tracked line (a recipe naming `source.track`),
`doit track --check`, and when the branch moved, `doit track` and a pull request with the
printed changes (peter-evans/create-pull-request, the common action for it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from xdnaforge.config.matrix import Cell
from xdnaforge.config.recipe import Recipe
from xdnaforge.fleet.aptly import HOST_KEYRING_DIR, KEYRING
from xdnaforge.fleet.lava import tags

PUBLISHER = "xdnaforge-publisher"
CHECKOUT = {"uses": "actions/checkout@v4"}
SETUP = {
    "name": "Set up xdnaforge",
    "run": "python3 -m venv .venv && .venv/bin/pip install -q -e .",
}


def job_id(prefix: str, name: str) -> str:
    """GitHub job ids allow letters, digits, `-` and `_` only."""
    return f"{prefix}-{re.sub(r'[^A-Za-z0-9_-]', '-', name)}"


def build_image(recipe: Recipe) -> str:
    """The container a recipe builds in: the distro its build dependencies are listed for."""
    distro = (
        recipe.build_depends[0][0]
        if recipe.build_depends
        else (f"{recipe.hosts.distro_id}-{recipe.hosts.distro_version}")
    )
    name, _, version = distro.partition("-")
    return f"{name}:{version}"


def build_job(recipe: Recipe) -> dict[str, Any]:
    return {
        "name": f"build {recipe.name}",
        "runs-on": "ubuntu-latest",
        "container": {"image": build_image(recipe)},
        "timeout-minutes": 240,
        "steps": [
            {
                "name": "Tools the build runs",
                "run": "apt-get update -q && apt-get install -y -q --no-install-recommends "
                "git ca-certificates python3 python3-venv dpkg-dev",
            },
            CHECKOUT,
            SETUP,
            {
                "name": "Build dependencies",
                "run": f".venv/bin/doit deps --target {recipe.name} --yes",
            },
            {"name": "Build, audit, report", "run": f".venv/bin/doit build --target {recipe.name}"},
            {
                "name": "Report",
                "if": "always()",
                "run": f'cat artifacts/{recipe.name}/BUILD_REPORT.md >> "$GITHUB_STEP_SUMMARY" '
                "|| true",
            },
            {
                "uses": "actions/upload-artifact@v4",
                "with": {"name": f"build-{recipe.name}", "path": f"artifacts/{recipe.name}/"},
            },
        ],
    }


def publish_job(recipes: Sequence[Recipe]) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [CHECKOUT, SETUP]
    for recipe in recipes:
        steps.append(
            {
                "uses": "actions/download-artifact@v4",
                "with": {"name": f"build-{recipe.name}", "path": f"artifacts/{recipe.name}/"},
            }
        )
        steps.append(
            {
                "name": f"Publish {recipe.name}",
                # the runner's site.yaml names the signing key and the aptly root it keeps
                "run": f".venv/bin/doit publish --target {recipe.name}",
            }
        )
    return {
        "name": "publish",
        "needs": [job_id("build", r.name) for r in recipes],
        "runs-on": ["self-hosted", PUBLISHER],
        "steps": steps,
    }


def validate_job(cell: Cell, recipe: Recipe, apt_url: str) -> dict[str, Any]:
    target = recipe.name
    packages = " ".join(recipe.install_order)
    base = f"{apt_url}/{target}"
    sources = f"/etc/apt/sources.list.d/xdnaforge-{target}.list"
    pins = f"/etc/apt/preferences.d/xdnaforge-{target}.pref"
    kept = f"/var/lib/xdnaforge/ci-kept/{target}"
    return {
        "name": f"validate {cell.name}",
        "needs": ["publish"],
        "runs-on": ["self-hosted", "linux", *tags(cell)],
        # a known-broken cell is expected to fail; its outcome still reaches the report
        "continue-on-error": cell.expect != "supported",
        "steps": [
            CHECKOUT,
            SETUP,
            {
                "name": "Keep what is installed (for the rollback)",
                "run": f"sudo mkdir -p {kept} {HOST_KEYRING_DIR} && sudo rm -f {kept}/*.deb && "
                f'for p in {packages}; do dpkg-query -W "$p" >/dev/null 2>&1 && '
                f'(cd {kept} && sudo dpkg-repack "$p"); done; true',
            },
            {
                "name": "Install from the published snapshot",
                "run": f"sudo curl -fsSL -o {HOST_KEYRING_DIR}/{KEYRING} {apt_url}/{KEYRING} && "
                f"sudo curl -fsSL -o {sources} {base}/xdnaforge-{target}.list && "
                f"sudo curl -fsSL -o {pins} {base}/xdnaforge-{target}.pref && "
                f"sudo apt-get update -q && "
                f"sudo apt-get install -y -q --allow-downgrades {packages}",
            },
            {"name": "Gates", "run": f".venv/bin/doit validate --target {target}"},
            {
                "name": "Job summary from the report",
                "if": "always()",
                "run": f".venv/bin/doit report --target {target} && "
                f'cat artifacts/{target}/BUILD_REPORT.md >> "$GITHUB_STEP_SUMMARY"',
            },
            {
                "uses": "actions/upload-artifact@v4",
                "if": "always()",
                "with": {
                    "name": f"records-{cell.name}",
                    # a host's records in the layout `doit fleet-report --from` reads
                    "path": f"artifacts/{target}/validation.json\n"
                    f"artifacts/{target}/bench/\nartifacts/{target}/kernel.json\n",
                    "if-no-files-found": "ignore",
                },
            },
            {
                "name": "Roll the host back",
                "if": "always()",
                "run": f"sudo apt-get purge -y -q {packages}; sudo rm -f {sources} {pins}; "
                f"if ls {kept}/*.deb >/dev/null 2>&1; then sudo dpkg -i {kept}/*.deb; fi; "
                "sudo apt-get update -q",
            },
        ],
    }


def report_job(cells: Sequence[Cell]) -> dict[str, Any]:
    # each validate job's records become hosts/<cell>/<target>/, a host directory as
    # `doit fleet-report --from` reads it (one runner per cell: the cell names the host)
    moves = " ".join(
        f"mkdir -p hosts/{c.name} && mv hosts/records-{c.name} hosts/{c.name}/{c.recipe};"
        for c in cells
    )
    froms = " ".join(f"--from hosts/{c.name}" for c in cells)
    return {
        "name": "fleet report",
        "needs": [job_id("validate", c.name) for c in cells],
        "if": "always()",
        "runs-on": "ubuntu-latest",
        "steps": [
            CHECKOUT,
            SETUP,
            {
                "uses": "actions/download-artifact@v4",
                "with": {"pattern": "records-*", "path": "hosts/"},
            },
            {
                "name": "Fleet report into the job summary",
                "run": f"{moves} .venv/bin/doit fleet-report {froms} && "
                'cat artifacts/fleet-report/FLEET_REPORT.md >> "$GITHUB_STEP_SUMMARY"',
            },
            {
                "uses": "actions/upload-artifact@v4",
                "with": {"name": "fleet-report", "path": "artifacts/fleet-report/"},
            },
        ],
    }


def workflow(cells: Sequence[Cell], recipes: Mapping[str, Recipe], apt_url: str) -> dict[str, Any]:
    built = [recipes[name] for name in sorted({c.recipe for c in cells})]
    # prebuilt recipes are a vendor's files that only the publisher has: nothing to build
    sources = [r for r in built if r.kind == "source"]
    jobs: dict[str, Any] = {job_id("build", r.name): build_job(r) for r in sources}
    jobs["publish"] = publish_job(sources)
    validated = [c for c in cells if recipes[c.recipe].kind == "source"]
    for cell in validated:
        jobs[job_id("validate", cell.name)] = validate_job(cell, recipes[cell.recipe], apt_url)
    jobs["fleet-report"] = report_job(validated)
    return {
        "name": "xdnaforge fleet",
        "on": {"workflow_dispatch": {}, "push": {"branches": ["main"]}},
        "permissions": {"contents": "read"},
        "concurrency": {"group": "xdnaforge-fleet", "cancel-in-progress": False},
        "jobs": jobs,
    }


CREATE_PULL_REQUEST = "peter-evans/create-pull-request@v7"
TRACK_SCHEDULE = "17 5 * * 1"  # weekly, Monday 05:17 UTC (off the hour: GitHub's busy minute)


def track_job(recipe: Recipe) -> dict[str, Any]:
    """Check one tracked line; when its branch moved, write the candidate and open a PR."""
    branch = recipe.pinned.track
    if branch is None:
        raise ValueError(f"recipe {recipe.name} follows no branch (source.track)")
    line = recipe.name
    moved = "steps.check.outputs.moved == 'true'"
    changes = f"artifacts/ci/track-{line}.txt"
    return {
        "name": f"track {line} (branch {branch})",
        "runs-on": "ubuntu-latest",
        "timeout-minutes": 60,
        "steps": [
            CHECKOUT,
            SETUP,
            {
                "name": f"Has branch {branch} moved past the pin?",
                "id": "check",
                "shell": "bash",
                # exit 1: the branch moved (or the check could not run: the next step says)
                "run": f"if .venv/bin/doit track --line {line} --check; "
                'then echo moved=false >> "$GITHUB_OUTPUT"; '
                'else echo moved=true >> "$GITHUB_OUTPUT"; fi',
            },
            {
                "name": "Write the candidate and what changed",
                "if": moved,
                "shell": "bash",
                "run": f"mkdir -p artifacts/ci && .venv/bin/doit track --line {line} "
                f"| tee {changes}",
            },
            {
                "name": "Open a pull request with the printed changes",
                "if": moved,
                "uses": CREATE_PULL_REQUEST,
                "with": {
                    "branch": f"xdnaforge-track/{line}",
                    "delete-branch": True,
                    "title": f"track {line}: branch {branch} moved (candidate, unverified)",
                    "commit-message": f"recipes/{line}.yaml: candidate for branch {branch} "
                    "(doit track)",
                    "body-path": changes,
                    "add-paths": f"recipes/{line}.yaml\nmatrices/*.yaml",
                    "labels": "track",
                },
            },
        ],
    }


def track_workflow(recipes: Mapping[str, Recipe]) -> dict[str, Any]:
    """The scheduled workflow: one job per recipe that follows an upstream branch."""
    tracked = [
        recipes[name]
        for name in sorted(recipes)
        if recipes[name].source is not None and recipes[name].pinned.track
    ]
    return {
        "name": "xdnaforge track upstream",
        "on": {"schedule": [{"cron": TRACK_SCHEDULE}], "workflow_dispatch": {}},
        # the PR step pushes a branch and opens the pull request
        "permissions": {"contents": "write", "pull-requests": "write"},
        "concurrency": {"group": "xdnaforge-track", "cancel-in-progress": False},
        "jobs": {job_id("track", r.name): track_job(r) for r in tracked},
    }
