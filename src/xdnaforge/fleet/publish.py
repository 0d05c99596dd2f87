"""`doit publish`: put a target's audited packages into the site's APT repository (aptly),
snapshot them, publish the snapshot signed, and write what a host needs to follow it.

Edge module: runs aptly and gpg through process/run.py; it only ever writes under build/ (the aptly
configuration, logs) and artifacts/ (aptly's root, the published tree, publish.json).
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xdnaforge.config.project import Project
from xdnaforge.errors import StageFailed, UsageError
from xdnaforge.fleet import aptly
from xdnaforge.fleet.aptly import AptLayout, DebRef
from xdnaforge.process.run import CommandFailed, run
from xdnaforge.state.paths import Workspace
from xdnaforge.state.records import read_record, write_atomic, write_record
from xdnaforge.tools import gpg, gpgv

TIMEOUT = 900.0
SITE_HINT = "add to site.yaml:\n  fleet:\n    signing_key: <gpg key id or fingerprint>"


def layout_for(project: Project) -> AptLayout:
    return AptLayout(
        config=project.site.build_dir / "aptly" / "aptly.conf",
        root=project.site.artifacts_dir / "apt",
    )


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def audited_packages(space: Workspace) -> list[dict[str, Any]]:
    """Every built package, each bound to the digest a passing audit recorded.

    A file whose bytes changed since the audit is refused with both digests: what gets
    published is exactly what was audited.
    """
    audit = read_record(space.record("audit"))
    packages = read_record(space.record("packages"))
    if audit is None or packages is None:
        raise StageFailed(
            f"no audited packages for {space.target}",
            hint=f"run `doit build --target {space.target}` first",
        )
    if audit.get("verdict") != "pass":
        raise StageFailed(
            f"the audit of {space.target} did not pass ({audit.get('verdict')})",
            hint="only packages with a passing audit are published; see audit.json",
        )
    audited = {p["package"]: p for p in audit.get("packages", [])}
    chosen = []
    for built in packages.get("packages", []):
        name = built["package"]
        path = space.records / built["file"]
        entry = audited.get(name)
        if entry is None or entry.get("verdict") != "pass":
            raise StageFailed(
                f"refusing {path.name}: {name} has no passing audit",
                hint=f"rerun `doit audit --target {space.target}`",
            )
        digest = sha256(path) if path.is_file() else "missing"
        if digest != entry["sha256"]:
            raise StageFailed(
                f"refusing {path.name}: its sha256 is {digest}, the audit passed {entry['sha256']}",
                hint="the file changed after the audit; rebuild or re-audit it "
                f"(`doit build --target {space.target}`)",
            )
        chosen.append(
            {
                "package": name,
                "version": built["version"],
                "architecture": built["architecture"],
                "sha256": digest,
                "file": str(path),
            }
        )
    return chosen


class Aptly:
    """aptly and gpg for one site, with the signing key's GNUPGHOME and one log file."""

    def __init__(self, project: Project, log: Path) -> None:
        self.layout = layout_for(project)
        self.log = log
        self.cwd = project.site.build_dir
        home = project.site.fleet.gnupg_home
        self.env = {"GNUPGHOME": str(home)} if home else {}

    def __call__(self, argv: list[str], ok_codes: tuple[int, ...] = (0,)) -> str:
        self.cwd.mkdir(parents=True, exist_ok=True)
        result = run(
            argv,
            cwd=self.cwd,
            env=self.env,
            timeout=TIMEOUT,
            log_file=self.log,
            ok_codes=ok_codes,
        )
        return result.stdout

    def snapshots(self) -> list[str]:
        return aptly.parse_lines(self(aptly.aptly(self.layout, "snapshot", "list", "-raw")))

    def fingerprint(self, key: str) -> str:
        try:
            text = self(gpg.fingerprint_argv(key))
        except CommandFailed:
            text = ""
        found = gpg.parse_fingerprint(text)
        if found is None:
            where = self.env.get("GNUPGHOME", "gpg's default home (~/.gnupg)")
            raise UsageError(
                f"site.yaml fleet.signing_key '{key}' is not a key in {where}",
                hint="create or import it (gpg --quick-gen-key ...), or set fleet.gnupg_home",
            )
        return found


def _create_snapshot(tools: Aptly, name: str, repo: str, dist: str, files: list[Path]) -> None:
    """A repository holding exactly these files, frozen as snapshot `name`."""
    layout = tools.layout
    repos = aptly.parse_lines(tools(aptly.aptly(layout, "repo", "list", "-raw")))
    if repo not in repos:
        tools(aptly.repo_create_argv(layout, repo, dist))
    # the repository is a staging area: emptied, then filled with this build only, so its
    # snapshot holds exactly the audited packages (older snapshots keep their own)
    tools(aptly.repo_clear_argv(layout, repo))
    tools(aptly.repo_add_argv(layout, repo, files))
    tools(aptly.snapshot_create_argv(layout, name, repo))


def publish(project: Project, space: Workspace, snapshot: str | None) -> dict[str, Any]:
    """Publish the target's build (or the named earlier snapshot: a fleet rollback)."""
    fleet = project.site.fleet
    if not fleet.signing_key:
        raise UsageError("publishing needs a signing key and site.yaml names none", hint=SITE_HINT)
    recipe = project.recipes[space.target]
    # refuse unaudited or changed files before touching aptly or gpg
    chosen = audited_packages(space) if snapshot is None else []
    tools = Aptly(project, space.logs / "publish.log")
    layout = tools.layout
    fingerprint = tools.fingerprint(fleet.signing_key)
    dist = aptly.distribution(recipe.hosts.distro_id, recipe.hosts.distro_version)
    repo = aptly.repo_name(recipe.hosts.distro_id, recipe.hosts.distro_version)
    prefix = space.target
    previous = read_record(space.record("publish")) or {}
    if snapshot is None:
        architectures = sorted({p["architecture"] for p in chosen} - {"all"}) or ["amd64"]
        write_atomic(layout.config, aptly.config_json(layout, architectures))
        lock = read_record(space.record("lock")) or {}
        name = aptly.snapshot_name(
            space.target,
            lock.get("fingerprints", {}).get("patch"),
            [p["sha256"] for p in chosen],
        )
        existing = tools.snapshots()
        if name in existing:
            print(f"snapshot {name} exists: the same build, published again")
        else:
            files = [Path(p["file"]) for p in chosen]
            _create_snapshot(tools, name, repo, dist, files)
            print(f"snapshot {name}: {', '.join(p['package'] for p in chosen)}")
        action = "publish"
    else:
        write_atomic(layout.config, aptly.config_json(layout, ["amd64"]))
        ours = [s for s in tools.snapshots() if s.startswith(f"{space.target}-")]
        if snapshot not in ours:
            raise UsageError(
                f"{space.target} has no snapshot '{snapshot}'",
                hint=f"its snapshots: {', '.join(ours) or 'none (run doit publish first)'}",
            )
        name = snapshot
        action = "rollback"
    refs = aptly.parse_snapshot_packages(
        tools(aptly.aptly(layout, "snapshot", "show", "-with-packages", name))
    )
    published = aptly.parse_lines(tools(aptly.aptly(layout, "publish", "list", "-raw")))
    switch = f"{prefix} {dist}" in published
    tools(aptly.publish_argv(layout, name, prefix, dist, fingerprint, switch=switch))
    host_files = _host_files(tools, project, space, name, dist, refs, fingerprint)
    if snapshot is None:
        shipped = _buildinfo(tools, project, space, fingerprint)
        if shipped:
            host_files = {**host_files, **shipped}
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    history = [*previous.get("history", []), {"time": now, "snapshot": name, "action": action}]
    body = {
        "target": space.target,
        "time": now,
        "snapshot": name,
        "action": action,
        "repository": repo,
        "prefix": prefix,
        "distribution": dist,
        "url": f"{_base_url(project)}/{prefix}",
        "signing_key": fingerprint,
        "packages": chosen
        or [
            {"package": r.package, "version": r.version, "architecture": r.architecture}
            for r in refs
        ],
        "host_files": host_files,
        "history": history,
    }
    write_record(space.record("publish"), "publish", body)
    print(f"published {name} as {prefix}/{dist} under {layout.public}")
    print(f"hosts: {host_files['sources']}, {host_files['preferences']}, {host_files['keyring']}")
    return body


def _buildinfo(
    tools: Aptly, project: Project, space: Workspace, fingerprint: str
) -> dict[str, str]:
    """The build's .buildinfo beside the repository, clear-signed with the repository's key,
    so that whoever installs the packages can rebuild and compare (rebuild-check
    --buildinfo URL)."""
    record = read_record(space.record("packages")) or {}
    name = record.get("buildinfo")
    if not name:
        return {}
    source = space.records / str(name)
    if not source.is_file():
        raise StageFailed(
            f"publish: packages.json names {source}, which is not there",
            hint=f"rebuild: doit build --target {space.target}",
        )
    out = tools.layout.public / space.target / source.name
    out.parent.mkdir(parents=True, exist_ok=True)
    tools(gpgv.clearsign_argv(fingerprint, source, out))
    return {
        "buildinfo": str(out),
        "buildinfo_url": f"{_base_url(project)}/{space.target}/{out.name}",
    }


def _base_url(project: Project) -> str:
    fleet = project.site.fleet
    return fleet.apt_url or (project.site.artifacts_dir / "apt" / "public").as_uri()


def _host_files(
    tools: Aptly,
    project: Project,
    space: Workspace,
    snapshot: str,
    dist: str,
    refs: list[DebRef],
    fingerprint: str,
) -> Mapping[str, str]:
    """The keyring, sources entry and pin file, served next to the repository itself so
    every host fetches them the same way (and a rollback reaches hosts as a new pin file)."""
    public = tools.layout.public
    keyring = public / aptly.KEYRING
    keyring.parent.mkdir(parents=True, exist_ok=True)
    tools(gpg.export_argv(fingerprint, keyring))
    architectures = sorted({r.architecture for r in refs} - {"all"}) or ["amd64"]
    sources = public / space.target / f"xdnaforge-{space.target}.list"
    write_atomic(
        sources, aptly.sources_entry(_base_url(project), space.target, dist, architectures)
    )
    pins = public / space.target / f"xdnaforge-{space.target}.pref"
    write_atomic(pins, aptly.preferences(snapshot, refs))
    return {
        "keyring": str(keyring),
        "sources": str(sources),
        "preferences": str(pins),
    }
