"""The source and build sections of a recipe from YAML data: the pinned source and its
submodules, prebuilt packages, a distro stack's archive and packages, build steps (argv
placeholders, ctest expectations, what to collect), build dependencies, known test failures,
compatibility changes and the build environment; every problem collected with its key path.

Pure, as config/recipe_parse.py, which reads the rest of a recipe and calls these.
"""

from __future__ import annotations

import re
from typing import Any

from xdnaforge.config.keyring import ArchiveKeyring, parse_keyring
from xdnaforge.config.proof import CompatChange, parse_compat
from xdnaforge.config.recipe import (
    PLACEHOLDERS,
    UNPINNED,
    BuildStep,
    CtestExpectation,
    DistroArchive,
    DistroPackage,
    Justified,
    LeftOut,
    PrebuiltPackage,
    Source,
    Submodule,
    UnusedSubmodule,
)
from xdnaforge.schema import Reader, did_you_mean
from xdnaforge.yamlfile import KeyPath

_PLACEHOLDER_RE = re.compile(r"\{([^{}]*)\}")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def leaves_tree(path: str) -> bool:
    """An absolute path, a home-relative one, or one with a ".." component: it can climb
    out of the tree it is meant to stay in."""
    return path.startswith(("/", "~")) or ".." in path.replace("\\", "/").split("/")


def parse_source(reader: Reader, value: Any, path: KeyPath) -> Source | None:
    source = reader.mapping(
        value,
        path,
        required=("name", "url", "commit"),
        optional=("ref", "track", "submodules", "unused_submodules"),
    )
    if source is None:
        return None
    submodules = []
    seen: set[str] = set()
    for index, item in enumerate(reader.sequence(source, "submodules", path)):
        here = (*path, "submodules", index)
        sub = reader.mapping(item, here, required=("path", "commit"), optional=("ref",))
        if sub is None:
            continue
        sub_path = reader.string(sub, "path", here)
        commit = reader.commit(sub, "commit", here)
        if sub_path in seen:
            reader.problem((*here, "path"), "this submodule is listed twice")
        if sub_path is not None and commit is not None:
            seen.add(sub_path)
            submodules.append(
                Submodule(path=sub_path, commit=commit, ref=reader.string(sub, "ref", here))
            )
    unused = []
    for index, item in enumerate(reader.sequence(source, "unused_submodules", path)):
        here = (*path, "unused_submodules", index)
        sub = reader.mapping(item, here, required=("path", "reason"))
        if sub is None:
            continue
        sub_path = reader.string(sub, "path", here)
        reason = reader.string(sub, "reason", here)
        if sub_path in seen:
            reader.problem((*here, "path"), "is both pinned and listed as unused")
        if sub_path is not None and reason is not None:
            unused.append(UnusedSubmodule(path=sub_path, reason=reason))
    name = reader.string(source, "name", path)
    url = reader.string(source, "url", path)
    commit = reader.commit(source, "commit", path)
    ref = reader.string(source, "ref", path)
    track = reader.string(source, "track", path)
    if name is None or url is None or commit is None:
        return None
    return Source(
        name=name,
        url=url,
        commit=commit,
        ref=ref,
        submodules=tuple(submodules),
        unused_submodules=tuple(unused),
        track=track,
    )


def parse_prebuilt(reader: Reader, value: Any, path: KeyPath) -> tuple[PrebuiltPackage, ...]:
    section = reader.mapping(value, path, required=("packages",))
    if section is None:
        return ()
    packages = []
    for index, item in enumerate(reader.sequence(section, "packages", path)):
        here = (*path, "packages", index)
        entry = reader.mapping(item, here, required=("file", "package", "sha256"))
        if entry is None:
            continue
        file = reader.string(entry, "file", here)
        package = reader.string(entry, "package", here)
        digest = reader.sha256(
            entry,
            "sha256",
            here,
            unpinned=UNPINNED,
            hint=f"or '{UNPINNED}' until the digest is checked against the "
            "vendor's published checksums",
        )
        if file and package and digest:
            packages.append(PrebuiltPackage(file=file, package=package, sha256=digest))
    if "packages" in section and not packages and not reader.problems:
        reader.problem((*path, "packages"), "list at least one package")
    return tuple(packages)


# Debian policy 5.6.12: [epoch:]upstream[-revision]; the epoch is part of the pin
DEB_VERSION_RE = re.compile(r"^([0-9]+:)?[0-9][A-Za-z0-9.+~:-]*$")
_PACKAGE_RE = re.compile(r"^[a-z0-9][a-z0-9.+-]+$")


def _package_name(reader: Reader, entry: dict[str, Any], path: KeyPath) -> str | None:
    name = reader.string(entry, "package", path)
    if name is not None and not _PACKAGE_RE.match(name):
        reader.problem(
            (*path, "package"),
            "is not a Debian package name (lowercase letters, digits, '.', '+', '-')",
        )
        return None
    return name


def parse_distro_stack(reader: Reader, value: Any, path: KeyPath) -> DistroArchive | None:
    """`distro:` of a distro recipe: the archive, the exact binary packages, what is left out."""
    section = reader.mapping(
        value,
        path,
        required=("archive", "packages"),
        optional=("architecture", "source_package", "left_out"),
    )
    if section is None:
        return None
    here = (*path, "archive")
    archive = reader.mapping(
        section.get("archive"),
        here,
        required=("url", "suite"),
        optional=("components", "signed_by", "keyring"),
    )
    packages: list[DistroPackage] = []
    seen: set[str] = set()
    for index, item in enumerate(reader.sequence(section, "packages", path)):
        at = (*path, "packages", index)
        entry = reader.mapping(item, at, required=("package", "version", "sha256"))
        if entry is None:
            continue
        name = _package_name(reader, entry, at)
        version = reader.string(entry, "version", at)
        digest = reader.sha256(
            entry,
            "sha256",
            at,
            unpinned=UNPINNED,
            hint=f"or '{UNPINNED}' until first seen: the target's lock.json then keeps it",
        )
        if version is not None and not DEB_VERSION_RE.match(version):
            reader.problem(
                (*at, "version"),
                "is not a Debian version ([epoch:]upstream[-revision])",
                hint="copy it, epoch included, from `apt-cache policy` or the Packages file",
            )
            version = None
        if name in seen:
            reader.problem((*at, "package"), "this package is listed twice")
            continue
        if name:
            seen.add(name)
        if name and version and digest:
            packages.append(DistroPackage(package=name, version=version, sha256=digest))
    if "packages" in section and not packages and not reader.problems:
        reader.problem((*path, "packages"), "list at least one package")
    left_out = []
    for index, item in enumerate(reader.sequence(section, "left_out", path)):
        at = (*path, "left_out", index)
        entry = reader.mapping(item, at, required=("package", "reason"), optional=("version",))
        if entry is None:
            continue
        name = _package_name(reader, entry, at)
        reason = reader.string(entry, "reason", at)
        version = reader.string(entry, "version", at)
        if version is not None and not DEB_VERSION_RE.match(version):
            reader.problem((*at, "version"), "is not a Debian version")
        if name in seen:
            reader.problem((*at, "package"), "is both taken and left out")
        elif name and reason:
            left_out.append(LeftOut(package=name, reason=reason, version=version))
    if archive is None:
        return None
    url = reader.string(archive, "url", here)
    suite = reader.string(archive, "suite", here)
    components = reader.strings(archive, "components", here) or ("main",)
    if url is not None and not re.match(r"^(https?|file)://", url):
        reader.problem((*here, "url"), "is not an http(s):// or file:// archive URL")
    if url is None or suite is None:
        return None
    keyring = (
        parse_keyring(reader, archive["keyring"], (*here, "keyring"))
        if "keyring" in archive
        else None
    )
    signed_by = reader.string(archive, "signed_by", here)
    if keyring is not None and signed_by is not None and signed_by != keyring.file:
        reader.problem((*here, "signed_by"), "names another file than keyring.file", hint="drop it")
    return DistroArchive(
        url=url.rstrip("/"),
        suite=suite,
        components=components,
        signed_by=keyring.file if keyring is not None else signed_by,
        keyring=keyring,
        architecture=reader.string(section, "architecture", path) or "amd64",
        source_package=reader.string(section, "source_package", path),
        packages=tuple(packages),
        left_out=tuple(left_out),
    )


def _step(reader: Reader, value: Any, path: KeyPath) -> BuildStep | None:
    step = reader.mapping(
        value,
        path,
        required=("name", "cwd", "argv", "packages", "produces"),
        optional=("timeout_minutes", "ctest", "choose"),
    )
    if step is None:
        return None
    argv = reader.strings(step, "argv", path)
    if "argv" in step and not argv:
        reader.problem((*path, "argv"), "must list the program and its arguments")
    for index, arg in enumerate(argv):
        for placeholder in _PLACEHOLDER_RE.findall(arg):
            if placeholder not in PLACEHOLDERS:
                reader.problem(
                    (*path, "argv", index),
                    "has an unknown placeholder" + did_you_mean(placeholder, PLACEHOLDERS),
                    hint=f"known placeholders: {', '.join('{' + p + '}' for p in PLACEHOLDERS)}",
                )
    ctest = None
    if "ctest" in step:
        here = (*path, "ctest")
        expected = reader.mapping(step["ctest"], here, required=("total", "skipped"))
        if expected is not None:
            total = reader.integer(expected, "total", here, minimum=0)
            skipped = reader.integer(expected, "skipped", here, minimum=0)
            if total is not None and skipped is not None:
                ctest = CtestExpectation(total=total, skipped=skipped)
    name = reader.string(step, "name", path)
    if name is not None and not NAME_RE.match(name):
        reader.problem(
            (*path, "name"),
            "is not a name",
            hint="lowercase letters, digits, '.', '_', '-'; it names files (logs, records)",
        )
    cwd = reader.string(step, "cwd", path)
    if cwd is not None and leaves_tree(cwd):
        reader.problem(
            (*path, "cwd"),
            "leaves the source tree",
            hint="a path relative to the source tree, without '..' or a leading '/'",
        )
    packages = reader.strings(step, "packages", path)
    for index, pattern in enumerate(packages):
        if leaves_tree(pattern):
            reader.problem(
                (*path, "packages", index),
                "leaves the build tree",
                hint="a glob relative to the step's cwd, without '..' or a leading '/'",
            )
    produces = reader.strings(step, "produces", path)
    choose = _choose(reader, step, path, produces)
    # a bad timeout is reported; the default keeps the step so later checks still see it
    timeout = reader.integer(step, "timeout_minutes", path, minimum=1, default=240) or 240
    if name is None or cwd is None or not argv:
        return None
    line = reader.document.where(path)[0]
    return BuildStep(
        name=name,
        cwd=cwd,
        argv=argv,
        packages=packages,
        produces=produces,
        choose=choose,
        timeout_minutes=timeout,
        ctest=ctest,
        origin=f"{reader.source}:{line}",
    )


def _choose(
    reader: Reader, step: dict[str, Any], path: KeyPath, produces: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """`choose: {<Package>: <glob>}`: the file to take when several carry one Package."""
    if "choose" not in step:
        return ()
    here = (*path, "choose")
    table = reader.mapping(step["choose"], here, free_keys=True)
    chosen = []
    for package, value in (table or {}).items():
        glob = reader.as_string(value, (*here, str(package)))
        if glob is None:
            continue
        if package not in produces:
            reader.problem(
                (*here, str(package)),
                "is not in this step's produces" + did_you_mean(str(package), produces),
                hint=f"it produces: {', '.join(produces) or 'nothing'}",
            )
            continue
        chosen.append((str(package), glob))
    return tuple(sorted(chosen))


def parse_justified(reader: Reader, value: Any, path: KeyPath, key: str) -> Justified | None:
    item = reader.mapping(value, path, required=(key, "justification"), optional=("package",))
    if item is None:
        return None
    name = reader.string(item, key, path)
    justification = reader.string(item, "justification", path)
    if name is None or justification is None:
        return None
    return Justified(
        name=name, package=reader.string(item, "package", path), justification=justification
    )


def parse_build(
    reader: Reader, value: Any, path: KeyPath
) -> tuple[
    tuple[BuildStep, ...],
    tuple[tuple[str, tuple[str, ...]], ...],
    tuple[Justified, ...],
    tuple[CompatChange, ...],
]:
    build = reader.mapping(
        value,
        path,
        required=("steps", "depends"),
        optional=("known_test_failures", "environment", "compat"),
    )
    if build is None:
        return (), (), (), ()
    steps = []
    names: set[str] = set()
    for index, item in enumerate(reader.sequence(build, "steps", path)):
        step = _step(reader, item, (*path, "steps", index))
        if step is None:
            continue
        if step.name in names:
            reader.problem((*path, "steps", index, "name"), "another step has this name")
        names.add(step.name)
        steps.append(step)
    depends = []
    here = (*path, "depends")
    table = (
        reader.mapping(build.get("depends"), here, free_keys=True) if "depends" in build else None
    )
    for key in table or {}:
        if isinstance(key, str):
            packages = reader.strings(table or {}, key, here)
            depends.append((key, packages))
    failures = []
    for index, item in enumerate(reader.sequence(build, "known_test_failures", path)):
        failure = parse_justified(reader, item, (*path, "known_test_failures", index), "test")
        if failure is not None:
            failures.append(failure)
    listed = {package for _, packages in depends for package in packages}
    compat = parse_compat(reader, build, path, listed)
    return tuple(steps), tuple(depends), tuple(failures), compat


def parse_environment(reader: Reader, build: Any) -> tuple[str, str] | None:
    """`build.environment: {distro, release}`: where the build runs (see environments/local.py)."""
    if not isinstance(build, dict) or "environment" not in build:
        return None
    path: KeyPath = ("build", "environment")
    value = reader.mapping(
        build["environment"], path, required=("distro", "release"), optional=("keyring",)
    )
    if value is None:
        return None
    distro = reader.string(value, "distro", path)
    release = reader.string(value, "release", path)
    if distro is not None and not NAME_RE.match(distro):
        reader.problem((*path, "distro"), "is not a distro id (as in os-release ID)")
        return None
    if distro is None or release is None:
        return None
    return distro, release


def parse_environment_keyring(reader: Reader, build: Any) -> ArchiveKeyring | None:
    """`build.environment.keyring`: the keys the environment's archive is signed with (a
    site's `environments.<name>.keyring` takes its place; see config/keyring.py)."""
    if not isinstance(build, dict) or not isinstance(build.get("environment"), dict):
        return None
    value = build["environment"]
    if "keyring" not in value:
        return None
    return parse_keyring(reader, value["keyring"], ("build", "environment", "keyring"))
