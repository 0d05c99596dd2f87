"""The commands that make a root file system, and what their failures mean: mmdebstrap's and
debootstrap's argv (given only the named keys), debootstrap's script for a suite, the root's
one apt source, and one line for a failed debootstrap.

Pure: data in, argv and messages out; environments/create.py runs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xdnaforge.config.envspec import EnvironmentSpec
from xdnaforge.errors import StageFailed

SCRIPTS = Path("/usr/share/debootstrap/scripts")
# inside the root: the only keys apt trusts for the environment's archive
KEYRING_INSIDE = "etc/apt/keyrings/xdnaforge-archive.gpg"


def fail(spec: EnvironmentSpec, cause: str, fix: str) -> StageFailed:
    return StageFailed(f"environment {spec.name}: {cause}", hint=fix)


def debootstrap_script(spec: EnvironmentSpec, scripts: Path = SCRIPTS) -> tuple[str, str | None]:
    """(script to pass, note): the suite's own script, else the site's, else Debian's `sid`."""
    if spec.script:
        return str(scripts / spec.script), f"using debootstrap's {spec.script} script (site.yaml)"
    assert spec.suite is not None
    if (scripts / spec.suite).exists():
        return str(scripts / spec.suite), None
    fallback = "gutsy" if spec.distro == "ubuntu" and not spec.twin else "sid"
    return (
        str(scripts / fallback),
        f"the installed debootstrap has no script for {spec.suite}; using its {fallback} script",
    )


def debootstrap_fault(spec: EnvironmentSpec, log_text: str) -> StageFailed:
    """One line for a failed debootstrap, from what it printed and its debootstrap.log."""
    text = log_text.lower()
    if "failed getting release file" in text or "couldn't download" in text:
        if "404" in text:
            return fail(
                spec,
                f"the archive {spec.mirror} has no suite '{spec.suite}'",
                "check the suite name (a code name: noble, resolute, forky) and the mirror",
            )
        return fail(
            spec,
            f"the archive {spec.mirror} cannot be reached",
            "check the network, a proxy (http_proxy) and the mirror URL in site.yaml",
        )
    if "no such script" in text:
        return fail(
            spec,
            f"debootstrap has no script for {spec.suite}",
            "name one in site.yaml (script: sid for Debian suites)",
        )
    if "signed by unknown key" in text or "release signed by" in text or "no_pubkey" in text:
        named = ", ".join(spec.keyring.fingerprints) if spec.keyring else "none"
        return fail(
            spec,
            f"the archive's Release file is not signed by the named keys ({named}); "
            "nothing was created",
            f"check the fingerprints and the mirror; {spec.keyring.source}"
            if spec.keyring
            else "name the archive's keys (keyring: in the recipe or site.yaml)",
        )
    last = next((line for line in reversed(log_text.splitlines()) if line.strip()), "")
    return fail(spec, f"debootstrap failed: {last.strip()}", f"see {place_hint(spec)}")


def place_hint(spec: EnvironmentSpec) -> str:
    return f"build/envs/{spec.name}.log"


def root_argv(
    spec: EnvironmentSpec,
    tool: str,
    keyring: Path,
    target: Path,
    packages: Sequence[str],
    scripts: Path = SCRIPTS,
) -> tuple[list[str], str | None]:
    """(argv that makes the root, note): mmdebstrap with the build dependencies in the same
    call, or debootstrap (the packages follow inside); both trust only `keyring`."""
    components = ",".join(spec.components)
    if Path(tool).name == "mmdebstrap":
        argv = [
            tool,
            "--variant=minbase",
            "--mode=root",
            f"--components={components}",
            f"--keyring={keyring}",
            '--aptopt=APT::Install-Recommends "false"',
        ]
        # Ubuntu's minbase (its Priority: required) has no apt; the root's updates need it
        include = dict.fromkeys(("apt", *packages))
        argv.append(f"--include={','.join(include)}")
        return [*argv, spec.suite or "", str(target), spec.mirror or ""], None
    script, note = debootstrap_script(spec, scripts)
    argv = [
        tool,
        "--variant=minbase",
        f"--components={components}",
        f"--keyring={keyring}",
        spec.suite or "",
        str(target),
        spec.mirror or "",
        script,
    ]
    return argv, note


def sources_list(spec: EnvironmentSpec) -> str:
    """The root's only apt source: the environment's archive, signed by the named keys."""
    return (
        f"deb [signed-by=/{KEYRING_INSIDE}] {spec.mirror} {spec.suite} "
        f"{' '.join(spec.components)}\n"
    )
