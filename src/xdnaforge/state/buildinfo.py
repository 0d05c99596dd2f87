"""Debian's .buildinfo (format 1.0, deb-buildinfo(5)) for a build's published packages:
composed from the records (build.json, lock.json, packages.json, the environment's packages),
rendered as a deb822 paragraph, and read back for `doit rebuild-check --buildinfo`.

Pure: dicts in, text out, and text in, a frozen BuildInfo out. The fields Debian defines come
first (Source, Binary, Architecture, Version, Checksums-Sha256, Build-Origin,
Build-Architecture, Build-Date, Build-Path, Environment, Installed-Build-Depends); what a
rebuild needs beyond them (the recipe, the pins, the patches, the environment) follows as
`X-Xdnaforge-*` fields, which other readers ignore.
"""

from __future__ import annotations

import datetime
import email.utils
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FORMAT = "1.0"
# variables of a build step that are part of what it was built with (deb-buildinfo(5))
ENVIRONMENT = ("SOURCE_DATE_EPOCH", "LANG", "LC_ALL", "TZ", "CC", "CXX", "CFLAGS", "CXXFLAGS")


class BuildInfoError(ValueError):
    """A .buildinfo that cannot be read: what is wrong, with the field."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Checksum:
    sha256: str
    size: int
    file: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildInfo:
    source: str
    binary: tuple[str, ...]
    architecture: str
    version: str
    checksums: tuple[Checksum, ...]
    build_origin: str
    build_architecture: str
    build_date: str
    build_path: str
    environment: tuple[tuple[str, str], ...]
    installed_build_depends: tuple[tuple[str, str], ...]  # (package, exact version)
    target: str = ""
    recipe_sha256: str = ""
    source_url: str = ""
    source_commit: str = ""
    submodules: tuple[tuple[str, str], ...] = ()  # (path, commit)
    patches: tuple[tuple[str, str], ...] = ()  # (set/file, sha256)
    build_environment: str = ""  # "ubuntu-26.04 rootfs of resolute from URL"
    versions: tuple[tuple[str, str], ...] = ()  # (package, version) of every binary
    files: tuple[tuple[str, str], ...] = ()  # (package, file): CPack's names are not dpkg's

    def package_of(self, file: str) -> str | None:
        """The package a listed .deb file holds: as X-Xdnaforge-Files says, else by the file
        name dpkg-deb gives it (<package>_...)."""
        name = file.rsplit("/", 1)[-1]
        for package, listed in self.files:
            if listed == name:
                return package
        for package in self.binary:
            if name.startswith(f"{package}_"):
                return package
        return None


def _date(epoch: int | None, iso: str | None) -> str:
    if iso:
        when = datetime.datetime.fromisoformat(iso)
    else:
        when = datetime.datetime.fromtimestamp(epoch or 0, datetime.UTC)
    return email.utils.format_datetime(when.astimezone(datetime.UTC), usegmt=False)


def compose(
    *,
    target: str,
    packages: Mapping[str, Any],
    build: Mapping[str, Any],
    lock: Mapping[str, Any],
    installed: Mapping[str, str],
    build_origin: str,
    build_architecture: str,
) -> BuildInfo:
    """The .buildinfo of one target's published packages, from its records."""
    entries = list(packages.get("packages", []))
    if not entries:
        raise BuildInfoError("packages.json lists no packages")
    steps = list(build.get("steps", {}).values())
    variables: dict[str, str] = {}
    for step in steps:
        for key, value in step.get("environment", {}).items():
            if key in ENVIRONMENT:
                variables.setdefault(key, str(value))
    epoch = variables.get("SOURCE_DATE_EPOCH")
    path = next((str(s.get("tree", {}).get("inside", "")) for s in steps), "")
    repositories = list(lock.get("repositories", []))
    source: Mapping[str, Any] = next((r for r in repositories if r.get("path") == "."), {})
    recipe = packages.get("recipe", {})
    environment = build.get("environment", {})
    return BuildInfo(
        source=str(source.get("name") or recipe.get("name") or target),
        binary=tuple(str(e["package"]) for e in entries),
        architecture=" ".join(sorted({str(e.get("architecture", "")) for e in entries})),
        version=str(entries[0].get("version", "")),
        checksums=tuple(
            Checksum(sha256=str(e["sha256"]), size=int(e.get("size", 0)), file=_name(e["file"]))
            for e in entries
        ),
        build_origin=build_origin,
        build_architecture=build_architecture,
        build_date=_date(int(epoch) if epoch and epoch.isdigit() else None, _finished(steps)),
        build_path=path,
        environment=tuple(sorted(variables.items())),
        installed_build_depends=tuple(sorted(installed.items())),
        target=target,
        recipe_sha256=str(recipe.get("sha256", "")),
        source_url=str(source.get("url", "")),
        source_commit=str(source.get("resolved", "")),
        submodules=tuple(
            (str(r.get("path")), str(r.get("resolved"))) for r in repositories if r is not source
        ),
        patches=tuple(
            (f"{p.get('set')}/{p.get('file')}", str(p.get("sha256")))
            for p in lock.get("patches", [])
        ),
        build_environment=str(environment.get("description") or environment.get("name") or ""),
        versions=tuple((str(e["package"]), str(e.get("version", ""))) for e in entries),
        files=tuple((str(e["package"]), _name(e["file"])) for e in entries),
    )


def _name(file: Any) -> str:
    """The file name beside the .buildinfo (packages.json says debs/<name>)."""
    return str(file).rsplit("/", 1)[-1]


def _finished(steps: list[Mapping[str, Any]]) -> str | None:
    times = [str(s["finished"]) for s in steps if s.get("finished")]
    return max(times) if times else None


def _depends_lines(depends: tuple[tuple[str, str], ...]) -> list[str]:
    lines = [f"{name} (= {version})," for name, version in depends]
    if lines:
        lines[-1] = lines[-1].removesuffix(",")
    return lines


def _lines(values: list[str]) -> str:
    return "".join(f"\n {value}" for value in values)


def render(info: BuildInfo) -> str:
    """The .buildinfo text (deb822; no signature: `gpg --clearsign` adds one)."""
    fields = [
        ("Format", FORMAT),
        ("Source", info.source),
        ("Binary", " ".join(info.binary)),
        ("Architecture", info.architecture),
        ("Version", info.version),
        ("Checksums-Sha256", _lines([f"{c.sha256} {c.size} {c.file}" for c in info.checksums])),
        ("Build-Origin", info.build_origin),
        ("Build-Architecture", info.build_architecture),
        ("Build-Date", info.build_date),
        ("Build-Path", info.build_path),
        ("Environment", _lines([f'{k}="{v}"' for k, v in info.environment])),
        ("Installed-Build-Depends", _lines(_depends_lines(info.installed_build_depends))),
        ("X-Xdnaforge-Target", info.target),
        ("X-Xdnaforge-Recipe-Sha256", info.recipe_sha256),
        ("X-Xdnaforge-Source", f"{info.source_url} {info.source_commit}".strip()),
        ("X-Xdnaforge-Submodules", _lines([f"{p} {c}" for p, c in info.submodules])),
        ("X-Xdnaforge-Patches", _lines([f"{n} {d}" for n, d in info.patches])),
        ("X-Xdnaforge-Build-Environment", info.build_environment),
        ("X-Xdnaforge-Versions", _lines([f"{p} {v}" for p, v in info.versions])),
        ("X-Xdnaforge-Files", _lines([f"{p} {f}" for p, f in info.files])),
    ]
    # a multi-line field starts on its own line (deb822: "Checksums-Sha256:\n <line>")
    return "".join(
        f"{key}:{value}\n" if value.startswith("\n") else f"{key}: {value}\n"
        for key, value in fields
        if value
    )


def _paragraph(text: str) -> dict[str, list[str]]:
    """deb822 fields -> their lines (the first line's value first), a clear-signed wrapper
    skipped."""
    if text.startswith("-----BEGIN PGP SIGNED MESSAGE-----"):
        body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
        text = body.split("-----BEGIN PGP SIGNATURE-----", 1)[0]
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            if fields:
                break
            continue
        if line[0] in " \t":
            if current is None:
                raise BuildInfoError(f"line {number}: a continuation line before any field")
            current.append(line.strip())
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise BuildInfoError(f"line {number}: not a 'Field: value' line")
        current = [value.strip()] if value.strip() else []
        fields[key.strip()] = current
    return fields


def _pairs(lines: list[str], field: str) -> tuple[tuple[str, str], ...]:
    found = []
    for line in lines:
        first, _, second = line.partition(" ")
        if not second:
            raise BuildInfoError(f"{field}: '{line[:60]}' is not two words")
        found.append((first, second.strip()))
    return tuple(found)


def _depends(lines: list[str]) -> tuple[tuple[str, str], ...]:
    found = []
    for item in ",".join(lines).split(","):
        item = item.strip()
        if not item:
            continue
        name, _, rest = item.partition(" ")
        version = rest.strip().removeprefix("(").removesuffix(")").strip()
        if not version.startswith("="):
            raise BuildInfoError(f"Installed-Build-Depends: {name} has no exact version")
        found.append((name.split(":", 1)[0], version[1:].strip()))
    return tuple(found)


def parse(text: str) -> BuildInfo:
    """A .buildinfo (ours or Debian's) -> BuildInfo; BuildInfoError names what is wrong."""
    fields = _paragraph(text)
    for required in ("Format", "Source", "Binary", "Version", "Checksums-Sha256"):
        if required not in fields:
            raise BuildInfoError(f"no {required} field")
    if fields["Format"][:1] != [FORMAT]:
        raise BuildInfoError(f"Format {' '.join(fields['Format'])}: only {FORMAT} is read")

    def one(key: str) -> str:
        return " ".join(fields.get(key, []))

    checksums = []
    for line in fields["Checksums-Sha256"]:
        parts = line.split()
        if len(parts) != 3 or not parts[1].isdigit():
            raise BuildInfoError(f"Checksums-Sha256: '{line[:80]}' is not 'sha256 size file'")
        checksums.append(Checksum(sha256=parts[0], size=int(parts[1]), file=parts[2]))
    environment = []
    for line in fields.get("Environment", []):
        key, _, value = line.partition("=")
        environment.append((key, value.strip('"')))
    url, _, commit = one("X-Xdnaforge-Source").partition(" ")
    return BuildInfo(
        source=one("Source").split(" ", 1)[0],
        binary=tuple(one("Binary").split()),
        architecture=one("Architecture"),
        version=one("Version"),
        checksums=tuple(checksums),
        build_origin=one("Build-Origin"),
        build_architecture=one("Build-Architecture"),
        build_date=one("Build-Date"),
        build_path=one("Build-Path"),
        environment=tuple(environment),
        installed_build_depends=_depends(fields.get("Installed-Build-Depends", [])),
        target=one("X-Xdnaforge-Target"),
        recipe_sha256=one("X-Xdnaforge-Recipe-Sha256"),
        source_url=url,
        source_commit=commit,
        submodules=_pairs(fields.get("X-Xdnaforge-Submodules", []), "X-Xdnaforge-Submodules"),
        patches=_pairs(fields.get("X-Xdnaforge-Patches", []), "X-Xdnaforge-Patches"),
        build_environment=one("X-Xdnaforge-Build-Environment"),
        versions=_pairs(fields.get("X-Xdnaforge-Versions", []), "X-Xdnaforge-Versions"),
        files=_pairs(fields.get("X-Xdnaforge-Files", []), "X-Xdnaforge-Files"),
    )


def file_name(info: BuildInfo) -> str:
    """`<source>_<version without epoch>_<arch>.buildinfo`, as dpkg-genbuildinfo names it."""
    version = info.version.split(":", 1)[-1]
    arch = info.architecture.split()[0] if info.architecture else "all"
    return f"{info.source}_{version}_{arch}.buildinfo"
