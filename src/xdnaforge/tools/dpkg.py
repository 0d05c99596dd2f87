"""dpkg-query and apt-get: argv builders, a pure parser, thin runners over run.run()."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from xdnaforge.process.run import CommandFailed, run

# one line per package, tab-separated (dpkg-query expands the \\t and \\n escapes itself)
SHOW_FORMAT = "${Package}\\t${db:Status-Abbrev}\\t${Version}\\n"


def parse_installed(output: str) -> dict[str, str]:
    """`dpkg-query -W -f SHOW_FORMAT` output -> {package: version} for installed packages."""
    installed = {}
    for line in output.splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            continue
        package, status, version = parts
        # "ii " = desired install, currently installed; anything else is not usable
        if status.strip() == "ii":
            installed[package.split(":", 1)[0]] = version
    return installed


def query_installed(
    packages: Sequence[str],
    *,
    cwd: Path,
    log_file: Path | None,
    admindir: Path | None = None,
    wrapper: Sequence[str] = (),
) -> dict[str, str]:
    """Installed versions of `packages` (absent ones are simply missing from the result)."""
    if not packages:
        return {}
    where = [f"--admindir={admindir}"] if admindir else []
    # exit status 1 means "some package is unknown", which is an answer, not a failure
    result = run(
        ["dpkg-query", *where, "-W", "-f", SHOW_FORMAT, *packages],
        cwd=cwd,
        timeout=60,
        log_file=log_file,
        ok_codes=(0, 1),
        wrapper=wrapper,
    )
    strange = [
        line
        for line in result.stderr.splitlines()
        if line.strip() and "no packages found matching" not in line
    ]
    if result.returncode == 1 and strange:
        # status 1 is only "not found"; anything else on stderr means the query itself broke
        raise CommandFailed(result.argv, returncode=1, output=result.stderr, log_file=log_file)
    return parse_installed(result.stdout)


def install_command(packages: Sequence[str]) -> list[str]:
    return ["apt-get", "install", "-y", "--no-install-recommends", *packages]


def root_options(root: Path) -> list[str]:
    """dpkg options for an alternative root. Its database is not the system's, so dependencies
    are not enforced there (a test tree or an image being assembled), and its log is the
    root's own: `--root` moves the database, not the log, which would otherwise be appended
    to the host's /var/log/dpkg.log."""
    if root == Path("/"):
        return []
    return [f"--root={root}", f"--log={root}/var/log/dpkg.log", "--force-depends"]


def install_argv(root: Path, files: Sequence[Path]) -> list[str]:
    return ["dpkg", *root_options(root), "-i", *[str(f) for f in files]]


def purge_argv(root: Path, packages: Sequence[str]) -> list[str]:
    return ["dpkg", *root_options(root), "--purge", *packages]


def repack_argv(root: Path, package: str) -> list[str]:
    # dpkg-repack rebuilds a .deb from the installed files, for packages we did not build
    where = [] if root == Path("/") else [f"--root={root}"]
    return ["dpkg-repack", *where, package]


def parse_md5sums(text: str) -> list[tuple[str, str]]:
    """A dpkg info/<package>.md5sums file -> [(md5, path relative to the root)]."""
    sums = []
    for line in text.splitlines():
        digest, _, path = line.partition("  ")
        if digest and path:
            sums.append((digest, path))
    return sums


def parse_status(text: str) -> dict[str, str]:
    """A dpkg status database (var/lib/dpkg/status) -> {package: version} of installed ones.

    Read directly (no process) so a plan can fingerprint an environment's packages cheaply.
    """
    installed = {}
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            key, sep, value = line.partition(":")
            if sep and not line.startswith((" ", "\t")):
                fields[key] = value.strip()
        if fields.get("Status", "").endswith(" installed") and "Package" in fields:
            installed[fields["Package"]] = fields.get("Version", "")
    return installed


@dataclass(frozen=True, slots=True)
class AptOutcome:
    """What `apt-get install` said it would do (its plan, printed before it acts)."""

    installed: tuple[str, ...]  # newly installed
    upgraded: tuple[str, ...]
    removed: tuple[str, ...]
    summary: str | None  # "32 upgraded, 67 newly installed, 0 to remove and 100 not upgraded."


_APT_LISTS = {
    "The following NEW packages will be installed:": "installed",
    "The following packages will be upgraded:": "upgraded",
    "The following packages will be REMOVED:": "removed",
}


def parse_apt_install(text: str) -> AptOutcome:
    """apt-get install's lists of new, upgraded and removed packages; pure."""
    lists: dict[str, list[str]] = {"installed": [], "upgraded": [], "removed": []}
    current: str | None = None
    summary = None
    for line in text.splitlines():
        if line.startswith("  ") and current is not None:
            lists[current] += [name.rstrip("*") for name in line.split()]
            continue
        current = _APT_LISTS.get(line.strip())
        if " newly installed, " in line and " upgraded, " in line:
            summary = line.strip()
    return AptOutcome(
        tuple(lists["installed"]), tuple(lists["upgraded"]), tuple(lists["removed"]), summary
    )
