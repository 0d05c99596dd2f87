#!/usr/bin/env python3
"""Build the catalogue of generated maintainer scripts from the generators' own packages and
sources, and write src/xdnaforge/debs/data/maintscripts.json (read by debs/generators.py).

Run by hand (never at run time, never by a test), with the network and the local mirrors:

    .venv/bin/python scripts/gen_maintscripts.py \
        [--cache /tmp/xdnaforge-maintscripts] \
        [--xrt /work/.mirror/Xilinx+XRT/repo] [--xdna /work/.mirror/amd+xdna-driver/repo]

What it reads, and how each read is checked:

- each suite's Release file, the Packages.xz indices it lists (their sha256 checked against
  the Release file), and in them the debhelper, libdebhelper-perl and dh-python entries;
  each .deb is downloaded (or taken from --cache) and its sha256 checked against its entry;
- from the .debs: the autoscript templates (/usr/share/debhelper/autoscripts/*, which
  dh-python installs its own into), the helpers that use them (/usr/bin/dh_*: which
  template, into which script, which triggers), debhelper's Dh_Lib.pm and Dh_Version.pm
  (the frame dh_installdeb writes, the marker lines, the version the markers carry) and
  dh-python's dhpython/debhelper.py (its own markers and how it writes #PACKAGE#). The frame
  is not typed in here: each version's source must hold the statements that write it, or
  the script stops and says which changed;
- XRT's and xdna-driver's CMake at the commits the recipes pin (recipes/*.yaml `source`),
  with `git show` from bare mirrors: which packages CPack gives maintainer scripts.

What it writes: the templates a script may be made of (generator, helper, script, text,
variables, the versions and releases that ship the text identically), the frame, the
triggers, the CPack facts, and the provenance (archive, suite, Release date, package
versions and sha256, the commits and blob ids read). A template is kept only when its
variables are the package name (#PACKAGE#) and dh-python's #ARGS# (empty in a default
invocation); every other template is listed under `left_out` with the reason. No
upstream code is kept but the template text needed for exact matching.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import re
import sys
import tarfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

from xdnaforge import yamlfile
from xdnaforge.tools.git import git

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "src/xdnaforge/debs/data/maintscripts.json"


@dataclass(frozen=True, slots=True)
class Suite:
    release: str  # the name shown: bookworm, noble
    archive: str
    dist: str
    components: tuple[str, ...]  # index directories under dists/<dist>/


# Debian lists Architecture: all packages in binary-all; Ubuntu only in binary-<arch>, and
# dh-python is in universe there
SUITES = (
    Suite("bookworm", "http://deb.debian.org/debian", "bookworm", ("main/binary-all",)),
    Suite("trixie", "http://deb.debian.org/debian", "trixie", ("main/binary-all",)),
    Suite("forky", "http://deb.debian.org/debian", "forky", ("main/binary-all",)),
    Suite(
        "noble",
        "http://archive.ubuntu.com/ubuntu",
        "noble",
        ("main/binary-amd64", "universe/binary-amd64"),
    ),
    Suite(
        "resolute",
        "http://archive.ubuntu.com/ubuntu",
        "resolute",
        ("main/binary-amd64", "universe/binary-amd64"),
    ),
)
# source package -> the binary packages holding its helpers, templates and libraries
SOURCES = {"debhelper": ("debhelper", "libdebhelper-perl"), "dh-python": ("dh-python",)}
SCRIPTS = ("preinst", "postinst", "prerm", "postrm")
# variables a kept template may use, and the value a default invocation gives the others
ALLOWED_VARIABLES: dict[str, dict[str, str | None]] = {
    "debhelper": {"PACKAGE": None},
    "dh-python": {"PACKAGE": None, "ARGS": ""},
}
# the triggers kept, by (helper, type, target); why the others are left out
KEEP_TRIGGERS = {("dh_makeshlibs", "activate-noawait", "ldconfig")}
TRIGGER_REASONS = {
    "update-initramfs": "rebuilds the initramfs: kernel payload (SCRIPT-001)",
    "update-sgmlcatalog": "comes with postrm-sgmlcatalog, which needs #CENTRALCAT#",
}
# a kept template must not run any of these (a belt to the variables' braces)
KERNEL_TOOLS = re.compile(
    r"\b(?:dkms|modprobe|insmod|rmmod|depmod|update-initramfs|dracut|mkinitramfs|mkinitcpio)\b"
)
TIMEOUT = 120

_VARIABLE_RE = re.compile(r"#([A-Z][A-Z0-9_]*)#")
# autoscript($package, 'postinst', 'postinst-menu', ...) and dh_systemd_start's
# $sd_autoscript->("postrm", "postrm-systemd-reload-only"): a script name then a template name
_PERL_CALL_RE = re.compile(
    r"""\(\s*(?:\$\w+\s*,\s*)?["'](preinst|postinst|prerm|postrm)["']\s*,\s*["']([\w.+-]+)["']"""
)
_PERL_TRIGGER_RE = re.compile(
    r"""autotrigger\(\s*\$\w+\s*,\s*["']([\w-]+)["']\s*,\s*["']([\w.+-]+)["']\s*\)"""
)
_PY_CALL_RE = re.compile(
    r"""\.autoscript\(\s*\w+\s*,\s*["'](preinst|postinst|prerm|postrm)["']\s*,"""
    r"""\s*["']([\w.+-]+)["']\s*,\s*([^)]*)\)"""
)
_DH_VERSION_RE = re.compile(r"""\$version\s*=\s*'([^']+)'""")

# the statements that write the frame, in each version of the generators' sources
DH_LIB_FRAME = {
    "script_start": (
        'print {$out_fd} "#!/bin/sh\\n";\n',
        'print {$out_fd} "set -e\\n";\n',
    ),
    "begin": (
        "print {$out_fd} '# Automatically added by ' . $TOOL_NAME . \"/${tool_version}\\n\";",
    ),
    "end": ('print {$out_fd} "# End automatically added section\\n";',),
    "trigger_begin": (
        "print {$ofd} '# Triggers added by ' . $TOOL_NAME . \"/${tool_version}\\n\";",
    ),
    "trigger_line": ('print {$ofd} "${trigger_type} ${trigger_target}\\n";',),
    # the helper's file name: basename($0), directly or through $ME
    "tool_name": (
        re.compile(
            r"our \$TOOL_NAME = basename\(\$0\);"
            r"|our \$ME = basename\(\$0\);\nour \$TOOL_NAME = \$ME;"
        ),
    ),
    # a helper whose $VERSION is DH_BUILTIN_VERSION writes Dh_Version's version
    "tool_version": (
        "$DH_TOOL_VERSION eq DH_BUILTIN_VERSION",
        "$Debian::Debhelper::Dh_Version::version",
    ),
}
DHPYTHON_FRAME = {
    "begin": (re.compile(r"""["']\\n# Automatically added by \{(?:basename\(argv\[0\]\))?\}"""),),
    "argv": (re.compile(r"basename\(argv\[0\]\)"),),
    "end": (re.compile(r"""\{(?:new_data)?\}\\n# End automatically added section\\n["']"""),),
    "snippet": (re.compile(r"""new_data \+= ["']\\n%s["'] % tpl"""),),
    "arch_all": (
        re.compile(
            r"""arch["']?\]?\s*==\s*["']all["']:\s*\n"""
            r"""\s*tpl = tpl\.replace\(["']#PACKAGE#["'], package\)"""
        ),
    ),
    "arch_qualified": (
        re.compile(
            r"""tpl\.replace\(["']#PACKAGE#["'],\s*(?:["']%s:%s["'] % \(package, arch\)"""
            r"""|f["']\{package\}:\{arch\}["'])\)"""
        ),
        re.compile(r"""arch = environ\[["']DEB_HOST_ARCH["']\]"""),
    ),
    "args": (re.compile(r"""tpl\.replace\(["']#ARGS#["'], i\)"""),),
}


class GenerationError(RuntimeError):
    pass


# ---------------------------------------------------------------- Debian versions


def _order(char: str) -> int:
    """dpkg's order of a character in the non-digit part of a version ("" ends the string)."""
    if char == "" or char.isdigit():
        return 0
    if char == "~":
        return -1
    if char.isalpha():
        return ord(char)
    return ord(char) + 256


def _compare_part(a: str, b: str) -> int:
    """dpkg's verrevcmp."""
    i = j = 0

    def at(text: str, k: int) -> str:
        return text[k] if k < len(text) else ""

    while i < len(a) or j < len(b):
        while (at(a, i) and not at(a, i).isdigit()) or (at(b, j) and not at(b, j).isdigit()):
            ac, bc = _order(at(a, i)), _order(at(b, j))
            if ac != bc:
                return ac - bc
            i, j = i + 1, j + 1
        while at(a, i) == "0":
            i += 1
        while at(b, j) == "0":
            j += 1
        first_diff = 0
        while at(a, i).isdigit() and at(b, j).isdigit():
            if not first_diff:
                first_diff = ord(a[i]) - ord(b[j])
            i, j = i + 1, j + 1
        if at(a, i).isdigit():
            return 1
        if at(b, j).isdigit():
            return -1
        if first_diff:
            return first_diff
    return 0


def compare_versions(a: str, b: str) -> int:
    """dpkg's version order (epoch, upstream, revision)."""

    def split(version: str) -> tuple[int, str, str]:
        epoch, _, rest = version.rpartition(":") if ":" in version else ("0", "", version)
        upstream, _, revision = rest.rpartition("-") if "-" in rest else (rest, "", "")
        return int(epoch or 0), upstream, revision

    ea, ua, ra = split(a)
    eb, ub, rb = split(b)
    if ea != eb:
        return ea - eb
    return _compare_part(ua, ub) or _compare_part(ra, rb)


def sort_versions(versions: set[str]) -> list[str]:
    from functools import cmp_to_key

    return sorted(versions, key=cmp_to_key(compare_versions))


# ---------------------------------------------------------------- archive


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
        data: bytes = response.read()
    return data


def paragraphs(text: str) -> Iterator[dict[str, str]]:
    """deb822 paragraphs; continuation lines are joined with newlines."""
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line.startswith((" ", "\t")) and key:
                fields[key] += "\n" + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if fields:
            yield fields


def release_hashes(release: str) -> dict[str, tuple[str, int]]:
    """path -> (sha256, size) from a Release file's SHA256 field."""
    for fields in paragraphs(release):
        if "SHA256" in fields:
            found = {}
            for line in fields["SHA256"].splitlines():
                parts = line.split()
                if len(parts) == 3:
                    found[parts[2]] = (parts[0], int(parts[1]))
            return found
    raise GenerationError("Release file without a SHA256 field")


@dataclass(slots=True)
class Entry:
    package: str
    version: str
    filename: str
    sha256: str
    size: int
    suite: Suite
    index: str


def suite_entries(suite: Suite) -> tuple[dict[str, Any], list[Entry]]:
    base = f"{suite.archive}/dists/{suite.dist}"
    release = fetch(f"{base}/Release").decode("utf-8")
    hashes = release_hashes(release)
    date = next((p.get("Date", "") for p in paragraphs(release) if "Date" in p), "")
    wanted = {name for names in SOURCES.values() for name in names}
    entries: list[Entry] = []
    indices = []
    for component in suite.components:
        path = f"{component}/Packages.xz"
        if path not in hashes:
            raise GenerationError(f"{base}/Release lists no {path}")
        # by hash, as apt reads it: the plain name may already be another index on a mirror
        # between syncs. A mirror without that hash gives the plain name: its entries' debs
        # are still checked against it, and the index is recorded as not the Release's
        listed = hashes[path][0]
        try:
            data = fetch(f"{base}/{component}/by-hash/SHA256/{listed}")
        except urllib.error.HTTPError as error:
            if error.code != 404:
                raise
            data = fetch(f"{base}/{path}")
        digest = hashlib.sha256(data).hexdigest()
        if digest != listed:
            print(
                f"warning: {base}/{path}: sha256 {digest}, the Release file lists {listed} "
                "(the mirror's index and Release are out of step)",
                file=sys.stderr,
            )
        indices.append({"path": path, "sha256": digest, "listed_in_release": digest == listed})
        for fields in paragraphs(lzma.decompress(data).decode("utf-8")):
            if fields.get("Package") in wanted:
                entries.append(
                    Entry(
                        fields["Package"],
                        fields["Version"],
                        fields["Filename"],
                        fields["SHA256"],
                        int(fields["Size"]),
                        suite,
                        path,
                    )
                )
    provenance = {
        "release": suite.release,
        "archive": suite.archive,
        "dist": suite.dist,
        "release_date": date,
        "indices": indices,
    }
    return provenance, entries


def download(entry: Entry, cache: Path) -> bytes:
    path = cache / Path(entry.filename).name
    cached = path.is_file()
    data = path.read_bytes() if cached else fetch(f"{entry.suite.archive}/{entry.filename}")
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry.sha256:
        raise GenerationError(f"{entry.filename}: sha256 {digest}, the index says {entry.sha256}")
    if not cached:
        cache.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return data


# ---------------------------------------------------------------- .deb contents


def ar_members(data: bytes) -> dict[str, bytes]:
    if not data.startswith(b"!<arch>\n"):
        raise GenerationError("not an ar archive")
    members = {}
    offset = 8
    while offset + 60 <= len(data):
        header = data[offset : offset + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        members[name] = data[offset + 60 : offset + 60 + size]
        offset += 60 + size + (size & 1)
    return members


def data_files(deb: bytes) -> dict[str, str | tuple[str]]:
    """path (no leading ./) -> text of a regular file, or (target,) of a symlink; only the
    paths this script reads."""
    members = ar_members(deb)
    name = next(n for n in members if n.startswith("data.tar"))
    raw = members[name]
    if name.endswith(".xz"):
        stream: io.BufferedIOBase | io.BytesIO = io.BytesIO(lzma.decompress(raw))
    elif name.endswith(".zst"):
        stream = io.BytesIO(zstandard.ZstdDecompressor().decompressobj().decompress(raw))
    elif name.endswith(".gz"):
        import gzip

        stream = io.BytesIO(gzip.decompress(raw))
    else:
        stream = io.BytesIO(raw)
    wanted = re.compile(
        r"usr/share/debhelper/autoscripts/[^/]+|usr/bin/dh_[^/]+|usr/share/dh-python/dh_[^/]+"
        r"|usr/share/dh-python/dhpython/debhelper\.py"
        r"|usr/share/perl5/Debian/Debhelper/(?:Dh_Lib|Dh_Version)\.pm"
    )
    files: dict[str, str | tuple[str]] = {}
    with tarfile.open(fileobj=stream, mode="r:") as tar:
        for member in tar:
            path = member.name.removeprefix("./")
            if not wanted.fullmatch(path):
                continue
            if member.issym():
                files[path] = (member.linkname,)
            elif member.isfile():
                handle = tar.extractfile(member)
                assert handle is not None
                files[path] = handle.read().decode("utf-8")
    return files


def _text(files: dict[str, str | tuple[str]], path: str) -> str:
    value = files.get(path)
    if not isinstance(value, str):
        raise GenerationError(f"{path} is missing")
    return value


def check_fragments(where: str, text: str, wanted: dict[str, tuple[Any, ...]]) -> None:
    for what, fragments in wanted.items():
        for fragment in fragments:
            found = fragment.search(text) if isinstance(fragment, re.Pattern) else fragment in text
            if not found:
                shown = fragment.pattern if isinstance(fragment, re.Pattern) else fragment
                raise GenerationError(
                    f"{where}: the statement writing the frame's {what} changed: {shown!r} is "
                    "not there; read the new source and update this script"
                )


@dataclass(slots=True)
class Snapshot:
    """What one version of one generator package holds."""

    source: str
    version: str
    releases: set[str] = field(default_factory=set)
    tool_version: str = ""
    templates: dict[str, str] = field(default_factory=dict)
    # helper -> [(script, template, args expression or "")]
    uses: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    triggers: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    debs: list[dict[str, Any]] = field(default_factory=list)


def read_debhelper(snapshot: Snapshot, files: dict[str, str | tuple[str]]) -> None:
    lib = _text(files, "usr/share/perl5/Debian/Debhelper/Dh_Lib.pm")
    check_fragments(f"debhelper {snapshot.version} Dh_Lib.pm", lib, DH_LIB_FRAME)
    match = _DH_VERSION_RE.search(_text(files, "usr/share/perl5/Debian/Debhelper/Dh_Version.pm"))
    if not match:
        raise GenerationError(f"debhelper {snapshot.version}: no version in Dh_Version.pm")
    snapshot.tool_version = match.group(1)
    for path, value in files.items():
        if path.startswith("usr/share/debhelper/autoscripts/") and isinstance(value, str):
            snapshot.templates[path.rpartition("/")[2]] = value
    for path, value in files.items():
        if path.startswith("usr/bin/dh_") and isinstance(value, str):
            helper = path.rpartition("/")[2]
            if "DH_BUILTIN_VERSION" not in value:
                continue  # a helper with a version of its own (dh_assistant writes no script)
            calls = [
                (script, name, "")
                for script, name in _PERL_CALL_RE.findall(value)
                if name in snapshot.templates
            ]
            snapshot.uses[helper] = sorted(set(calls))
            snapshot.triggers[helper] = sorted(set(_PERL_TRIGGER_RE.findall(value)))


def read_dhpython(snapshot: Snapshot, files: dict[str, str | tuple[str]]) -> None:
    lib = _text(files, "usr/share/dh-python/dhpython/debhelper.py")
    check_fragments(f"dh-python {snapshot.version} debhelper.py", lib, DHPYTHON_FRAME)
    for path, value in files.items():
        if path.startswith("usr/share/debhelper/autoscripts/") and isinstance(value, str):
            snapshot.templates[path.rpartition("/")[2]] = value
    for path, value in files.items():
        if not path.startswith("usr/bin/dh_"):
            continue
        helper = path.rpartition("/")[2]
        # usr/bin/dh_python3 is a link into usr/share/dh-python
        script_path = (
            f"usr/share/dh-python/{Path(value[0]).name}" if isinstance(value, tuple) else path
        )
        source = _text(files, script_path)
        calls = sorted(set(_PY_CALL_RE.findall(source)))
        for _script, _name, args in calls:
            if args.strip() not in ('""', "''", "args"):
                raise GenerationError(f"{helper}: an autoscript call with arguments {args!r}")
        if any(args.strip() == "args" for _s, _n, args in calls) and not re.search(
            r"""^\s*args = ["']["']\s*$""", source, re.M
        ):
            raise GenerationError(f"{helper}: ARGS no longer starts empty")
        snapshot.uses[helper] = [(s, n, a.strip()) for s, n, a in calls]


# ---------------------------------------------------------------- the catalogue


def catalogue(snapshots: list[Snapshot]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Kept templates grouped by identical text, and the ones left out with why."""
    kept: dict[tuple[str, str, str, str, str], set[str]] = {}
    releases: dict[tuple[str, str, str, str, str], set[str]] = {}
    left: dict[tuple[str, str, str], dict[str, Any]] = {}
    for snap in snapshots:
        allowed = ALLOWED_VARIABLES[snap.source]
        used = {name for calls in snap.uses.values() for _s, name, _a in calls}
        for name, text in snap.templates.items():
            variables = sorted(set(_VARIABLE_RE.findall(text)))
            reason = ""
            if not set(variables) <= set(allowed):
                others = [v for v in variables if v not in allowed]
                reason = "needs " + ", ".join(f"#{v}#" for v in others)
            elif KERNEL_TOOLS.search(text):
                reason = "runs a module or initramfs tool"
            elif name not in used:
                reason = "no helper names it (an old helper's, or one for another interpreter)"
            if reason:
                key = (snap.source, name, reason)
                item = left.setdefault(
                    key,
                    {
                        "generator": snap.source,
                        "template": name,
                        "reason": reason,
                        "variables": variables,
                        "versions": set(),
                    },
                )
                item["versions"].add(snap.version)
                continue
            for helper, calls in snap.uses.items():
                for script, template, _args in calls:
                    if template == name:
                        group = (snap.source, helper, script, name, text)
                        kept.setdefault(group, set()).add(snap.version)
                        releases.setdefault(group, set()).update(snap.releases)
    templates: list[dict[str, Any]] = []
    for group, versions in kept.items():
        source, helper, script, name, text = group
        allowed = ALLOWED_VARIABLES[source]
        variables = sorted(set(_VARIABLE_RE.findall(text)))
        templates.append(
            {
                "generator": source,
                "helper": helper,
                "script": script,
                "template": name,
                "variables": variables,
                "defaults": {v: allowed[v] for v in variables if allowed[v] is not None},
                "versions": sort_versions(versions),
                "releases": sorted(releases[group]),
                "text": text,
            }
        )
    templates.sort(
        key=lambda t: (t["generator"], t["helper"], t["script"], t["template"], t["versions"][0])
    )
    left_out = []
    for item in left.values():
        item["versions"] = sort_versions(item["versions"])
        left_out.append(item)
    left_out.sort(key=lambda t: (t["generator"], t["template"], t["reason"]))
    return templates, left_out


def trigger_catalogue(
    snapshots: list[Snapshot],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    found: dict[tuple[str, str, str], set[str]] = {}
    where: dict[tuple[str, str, str], set[str]] = {}
    for snap in snapshots:
        for helper, triggers in snap.triggers.items():
            for kind, target in triggers:
                found.setdefault((helper, kind, target), set()).add(snap.version)
                where.setdefault((helper, kind, target), set()).update(snap.releases)
    kept, left = [], []
    for (helper, kind, target), versions in sorted(found.items()):
        item = {
            "generator": "debhelper",
            "helper": helper,
            "type": kind,
            "target": target,
            "versions": sort_versions(versions),
            "releases": sorted(where[(helper, kind, target)]),
        }
        if (helper, kind, target) in KEEP_TRIGGERS:
            kept.append(item)
        else:
            item["reason"] = TRIGGER_REASONS.get(target, "not one of the triggers kept")
            left.append(item)
    return kept, left


# ---------------------------------------------------------------- CPack at the pins


def git_show(repo: Path, commit: str, path: str) -> str:
    return git(["--git-dir", str(repo), "show", f"{commit}:{path}"], cwd=REPO, log_file=None).stdout


def git_blob(repo: Path, commit: str, path: str) -> str:
    result = git(["--git-dir", str(repo), "rev-parse", f"{commit}:{path}"], cwd=REPO, log_file=None)
    return result.stdout.strip()


def git_paths(repo: Path, commit: str, folder: str) -> list[str]:
    result = git(
        ["--git-dir", str(repo), "ls-tree", "--name-only", f"{commit}:{folder}"],
        cwd=REPO,
        log_file=None,
    )
    return [f"{folder}/{name}" for name in result.stdout.split()]


def cmake_sets(text: str, variable: re.Pattern[str]) -> list[tuple[str, list[str]]]:
    """(variable name, the if() conditions it sits in) for each set() of a matching variable."""
    found = []
    stack: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        lowered = line.lower()
        if re.match(r"if\s*\(", lowered):
            stack.append(line[line.index("(") + 1 : line.rindex(")")].strip())
        elif re.match(r"elseif\s*\(", lowered) and stack:
            stack[-1] = "elseif " + line[line.index("(") + 1 : line.rindex(")")].strip()
        elif re.match(r"else\s*\(", lowered) and stack:
            stack[-1] = "else of " + stack[-1]
        elif re.match(r"endif\s*\(", lowered) and stack:
            stack.pop()
        match = re.match(r"set\s*\(\s*(\w+)", line, re.I)
        if match and variable.fullmatch(match.group(1)):
            found.append((match.group(1), list(stack)))
    return found


def recipe_pins() -> dict[tuple[str, str], list[str]]:
    """(xdna-driver commit, xrt commit) -> recipe names, from recipes/*.yaml."""
    pins: dict[tuple[str, str], list[str]] = {}
    for path in sorted((REPO / "recipes").glob("*.yaml")):
        data = yamlfile.load(path).data
        source = data.get("source") if isinstance(data, dict) else None
        if not isinstance(source, dict):
            continue
        xrt = next(
            (s["commit"] for s in source.get("submodules", []) if s.get("path") == "xrt"), ""
        )
        pins.setdefault((source["commit"], xrt), []).append(data["name"])
    return pins


def script_tools(text: str) -> list[str]:
    tools = re.findall(
        r"dkms_driver\.sh|/usr/lib/dkms/common\.postinst|\bdkms\b|\bmodprobe\b|\brmmod\b"
        r"|udev/rules\.d|dracut\.conf\.d",
        text,
    )
    return sorted(set(tools))


def cpack_facts(xrt_repo: Path, xdna_repo: Path) -> dict[str, Any]:
    xrt_entries, xdna_entries = [], []
    control_extra = re.compile(r"CPACK_DEBIAN_(?:\w+_)?PACKAGE_CONTROL_EXTRA", re.I)
    for (xdna, xrt), recipes in sorted(recipe_pins().items()):
        cpack = git_show(xrt_repo, xrt, "src/CMake/cpackLin.cmake")
        components = {}
        for name, conditions in cmake_sets(cpack, control_extra):
            component = (
                name.upper()
                .removeprefix("CPACK_DEBIAN_")
                .removesuffix("PACKAGE_CONTROL_EXTRA")
                .rstrip("_")
            )
            components[component.lower() or "(every component)"] = conditions
        if set(components) & {"base", "npu", "base-dev", "npu-dev"}:
            raise GenerationError(f"XRT {xrt}: a -npu component has maintainer scripts now")
        generic = components.get("(every component)", ["(unconditional)"])
        if not any("CROSS_COMPILE" in c for c in generic):
            raise GenerationError(f"XRT {xrt}: the scripts for every component are not only cross")
        read = {"src/CMake/cpackLin.cmake": git_blob(xrt_repo, xrt, "src/CMake/cpackLin.cmake")}
        templates = []
        for path in git_paths(xrt_repo, xrt, "src/CMake/config"):
            if re.fullmatch(r".*/(?:postinst|prerm|postrm|preinst)[^/]*\.in", path):
                templates.append(
                    {
                        "path": path,
                        "blob": git_blob(xrt_repo, xrt, path),
                        "runs": script_tools(git_show(xrt_repo, xrt, path)),
                    }
                )
        xrt_entries.append(
            {
                "repo": "Xilinx/XRT",
                "commit": xrt,
                "recipes": recipes,
                "read": read,
                "scripts_for": dict(sorted(components.items())),
                "npu_build": "no maintainer scripts: the base and npu components have no "
                "CONTROL_EXTRA, and the one for every component is set only when cross-compiling",
                "templates": templates,
                "kept": [],
                "why_none_kept": "the scripts are those of packages a -npu build does not make "
                "(the xrt and alveo components install Alveo's xocl DKMS module, aws, azure and "
                "container switch mpd plugins), and CMake fills in their @VARIABLES@",
            }
        )
        pkg = git_show(xdna_repo, xdna, "CMake/pkg.cmake")
        sets = cmake_sets(pkg, control_extra)
        if not sets or any(not any("NOT SKIP_KMOD" in c for c in cond) for _n, cond in sets):
            raise GenerationError(f"xdna-driver {xdna}: CONTROL_EXTRA outside if(NOT SKIP_KMOD)")
        build = git_show(xdna_repo, xdna, "build/build.sh")
        if (
            not re.search(r'-nokmod\)\s*\n\s*skip_kmod=(?:1|"ON")\s*\n', build)
            or "-DSKIP_KMOD=$skip_kmod" not in build
        ):
            raise GenerationError(f"xdna-driver {xdna}: -nokmod no longer sets SKIP_KMOD")
        xdna_templates = [
            {
                "path": path,
                "blob": git_blob(xdna_repo, xdna, path),
                "runs": script_tools(git_show(xdna_repo, xdna, path)),
            }
            for path in ("CMake/config/postinst.in", "CMake/config/prerm.in")
        ]
        xdna_entries.append(
            {
                "repo": "amd/xdna-driver",
                "commit": xdna,
                "recipes": recipes,
                "read": {
                    "CMake/pkg.cmake": git_blob(xdna_repo, xdna, "CMake/pkg.cmake"),
                    "build/build.sh": git_blob(xdna_repo, xdna, "build/build.sh"),
                },
                "package": "xrt_plugin-amdxdna",
                "scripts_when": sorted({c for _n, cond in sets for c in cond}),
                "nokmod_build": "no maintainer scripts: -nokmod sets SKIP_KMOD, and "
                "CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA is set only if(NOT SKIP_KMOD)",
                "templates": xdna_templates,
                "kept": [],
                "why_none_kept": "postinst and prerm install the DKMS module, load or unload it "
                "and write udev rules and dracut configuration",
            }
        )
    return {"xrt": xrt_entries, "xdna-driver": xdna_entries}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/xdnaforge-maintscripts"))
    parser.add_argument("--xrt", type=Path, default=Path("/work/.mirror/Xilinx+XRT/repo"))
    parser.add_argument("--xdna", type=Path, default=Path("/work/.mirror/amd+xdna-driver/repo"))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    suites = []
    snapshots: dict[tuple[str, str], Snapshot] = {}
    files_of: dict[tuple[str, str], dict[str, str | tuple[str]]] = {}
    for suite in SUITES:
        provenance, entries = suite_entries(suite)
        suites.append(provenance)
        for source, binaries in SOURCES.items():
            chosen = [e for e in entries if e.package in binaries]
            versions = {e.version for e in chosen}
            if {e.package for e in chosen} != set(binaries) or len(versions) != 1:
                raise GenerationError(
                    f"{suite.release}: {source}'s packages {binaries} not found once each "
                    f"at one version ({[(e.package, e.version) for e in chosen]})"
                )
            version = versions.pop()
            snap = snapshots.setdefault((source, version), Snapshot(source, version))
            snap.releases.add(suite.release)
            files = files_of.setdefault((source, version), {})
            for entry in chosen:
                record = {
                    "package": entry.package,
                    "filename": entry.filename,
                    "sha256": entry.sha256,
                }
                if record not in snap.debs:
                    files.update(data_files(download(entry, args.cache)))
                    snap.debs.append(record)
            print(f"{suite.release}: {source} {version}", file=sys.stderr)
    for key, snap in snapshots.items():
        if snap.source == "debhelper":
            read_debhelper(snap, files_of[key])
        else:
            read_dhpython(snap, files_of[key])
    ordered = sorted(snapshots.values(), key=lambda s: s.source)
    templates, left_out = catalogue(ordered)
    triggers, triggers_left_out = trigger_catalogue(ordered)
    generators = []
    for source in SOURCES:
        for version in sort_versions({s.version for s in ordered if s.source == source}):
            snap = snapshots[(source, version)]
            generators.append(
                {
                    "source": source,
                    "version": version,
                    "marker_version": snap.tool_version or None,
                    "releases": sorted(snap.releases),
                    "debs": sorted(snap.debs, key=lambda d: d["package"]),
                }
            )
    document = {
        "schema": 1,
        "generated_by": "scripts/gen_maintscripts.py",
        "suites": suites,
        "generators": generators,
        "frame": {
            "script_start": "#!/bin/sh\nset -e\n",
            "debhelper": {
                "begin": "# Automatically added by {helper}/{marker_version}\n",
                "end": "# End automatically added section\n",
                "package": "{package}",
            },
            "dh-python": {
                "begin": "\n# Automatically added by {helper}\n",
                "between": "\n",
                "end": "\n# End automatically added section\n",
                "package": "{package}:{architecture}, or {package} when Architecture: all",
            },
            "triggers": {
                "begin": "# Triggers added by {helper}/{marker_version}\n",
                "line": "{type} {target}\n",
            },
        },
        "templates": templates,
        "triggers": triggers,
        "left_out": left_out,
        "triggers_left_out": triggers_left_out,
        "cpack": cpack_facts(args.xrt, args.xdna),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", "utf-8")
    print(
        f"{args.out}: {len(templates)} templates, {len(triggers)} triggers kept; "
        f"{len(left_out)} templates and {len(triggers_left_out)} triggers left out",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
