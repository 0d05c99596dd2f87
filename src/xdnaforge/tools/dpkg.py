"""dpkg-query and apt-get: argv builders, a pure parser, thin runners over run.run()."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xdnaforge.run import CommandFailed, run

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


def query_installed(packages: Sequence[str], *, cwd: Path, log_file: Path | None) -> dict[str, str]:
    """Installed versions of `packages` (absent ones are simply missing from the result)."""
    if not packages:
        return {}
    # exit status 1 means "some package is unknown", which is an answer, not a failure
    result = run(
        ["dpkg-query", "-W", "-f", SHOW_FORMAT, *packages],
        cwd=cwd,
        timeout=60,
        log_file=log_file,
        ok_codes=(0, 1),
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
