"""A candidate recipe for a new upstream line, and what changed against the recipe it
started from; pure.

`doit track` reads an upstream tree (stages/track.py does the reading); this module turns
what it read into a candidate recipe document and the list of changes to print: pins,
submodules added or gone, build dependencies (from the pinned `xrtdeps.sh` and
`amdxdna_deps.sh`), the firmware the line was released with (`tools/WHENCE`,
`tools/info.json`) and the options the pinned build scripts accept. It never invents a
fact: what it cannot read (the driver contract: the compatibility resolver's business) is
carried from the recipe it started from and said to be carried.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdnaforge.host import npu_generation
from xdnaforge.planning.buildscript import parse_options, unknown_options
from xdnaforge.planning.linefacts import blob_changes, device_changes
from xdnaforge.tools.git import Gitlink

# Debian-family names upstream's xrtdeps.sh still uses that current Ubuntu and Debian
# releases renamed (the recipes list the new names)
DEBIAN_RENAMES = {"libncurses5-dev": "libncurses-dev", "libtiff5-dev": "libtiff-dev"}
DEBIAN_FAMILY = ("ubuntu", "debian", "linuxmint")

_LIST_RE = re.compile(r"\bUB_LIST=\(\s*(.*?)\)", re.DOTALL)
_APT_RE = re.compile(r"apt-get\s+install\s+(?:-\S+\s+)*([^\n;&|]+)")
_WHENCE_LINK_RE = re.compile(
    r"^Link:\s*amdnpu/([0-9a-f]{4}_[0-9a-f]{2})/npu\.dev\.sbin\s*->\s*(\S+)"
)
_FW_VERSION_RE = re.compile(r"npu\.sbin\.(\d+(?:\.\d+){3})$")
_SETTINGS_RE = re.compile(r"set\(XRT_VERSION_(MAJOR|MINOR)\s+(\d+)\)")


# --- reading the pinned upstream files ------------------------------------------------


def debian_packages(xrtdeps: str) -> tuple[str, ...]:
    """The Debian-family list of XRT's xrtdeps.sh: `ub_package_list`'s UB_LIST, plus
    pybind11-dev, which its install_pybind11 installs with apt on Ubuntu >= 23.

    The conditional additions (linux-headers-$(uname -r), dmidecode, gcc-8 on aarch64) are
    for the kernel module and other machines, never for a -nokmod build here.
    """
    body = xrtdeps.partition("ub_package_list()")[2]
    match = _LIST_RE.search(body)
    if match is None:
        return ()
    names = [w for w in match.group(1).replace("\\", " ").split() if not w.startswith("#")]
    if re.search(r"apt-get install -y pybind11-dev", xrtdeps):
        names.append("pybind11-dev")
    return tuple(dict.fromkeys(names))


def apt_installs(script: str) -> tuple[str, ...]:
    """Packages a script installs with `apt-get install` (amdxdna_deps.sh: jq)."""
    names: list[str] = []
    for match in _APT_RE.finditer(script):
        names += [w for w in match.group(1).split() if not w.startswith(("$", "-", '"'))]
    return tuple(dict.fromkeys(names))


def released_firmware(whence: str | None, info: str | None) -> dict[str, str]:
    """Firmware directory (17f0_10) -> the npu.dev.sbin version the line was released with.

    1.9 pins it in tools/WHENCE (`Link: amdnpu/<dir>/npu.dev.sbin -> ...npu.sbin.<version>`);
    1.6 to 1.8 list it in tools/info.json (`firmwares[]`, fw_name npu.dev.sbin).
    """
    found: dict[str, str] = {}
    for line in (whence or "").splitlines():
        match = _WHENCE_LINK_RE.match(line.strip())
        if match:
            version = _FW_VERSION_RE.search(match.group(2))
            if version:
                found[match.group(1)] = version.group(1)
    if found or not info:
        return found
    try:
        data = json.loads(info)
    except ValueError:
        return found
    for item in data.get("firmwares", []) if isinstance(data, dict) else []:
        if not isinstance(item, dict) or item.get("fw_name") != "npu.dev.sbin":
            continue
        device, revision = item.get("pci_device_id"), item.get("pci_revision_id")
        if isinstance(device, str) and isinstance(revision, str) and "version" in item:
            found[f"{device.lower()}_{revision.lower()}"] = str(item["version"])
    return found


def xrt_version(settings_cmake: str | None) -> str | None:
    """MAJOR.MINOR.0 from XRT's src/CMake/settings.cmake: what an upstream build reports."""
    values = dict(_SETTINGS_RE.findall(settings_cmake or ""))
    if "MAJOR" not in values or "MINOR" not in values:
        return None
    return f"{values['MAJOR']}.{values['MINOR']}.0"


def xrt_line(describe: str | None, version: str | None) -> str | None:
    """How a maintainer names an XRT commit: its tag (2.25.0), `2.21.75 + 6` commits after
    a tag of the same MAJOR.MINOR, else the line its settings.cmake says (2.26 line)."""
    match = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-(\d+)-g[0-9a-f]+)?", describe or "")
    minor = ".".join(version.split(".")[:2]) if version else None
    if match and match.group(2) is None:
        return match.group(1)
    if match and minor and match.group(1).startswith(f"{minor}."):
        return f"{match.group(1)} + {match.group(2)}"
    return f"{minor} line" if minor else describe


# --- what an upstream tree says -----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeFacts:
    """What one upstream tree (top commit and its gitlinks) says, as read from the caches."""

    commit: str
    gitlinks: tuple[Gitlink, ...]
    xrt_describe: str | None  # 2.25.0, 2.21.75-6-g8661761775
    xrt_version: str | None
    # upstream's Debian-family list (xrtdeps.sh) and the shim's own (amdxdna_deps.sh)
    upstream_depends: tuple[str, ...]
    firmware: Mapping[str, str]
    # build step name -> the options its pinned script accepts (None: no script there)
    options: Mapping[str, frozenset[str] | None]
    # planning/linefacts.py: the line's own XRT version (tools/info.json), every firmware
    # and certificate blob (`<dir>/<name>` -> version), the PCI ids its driver binds
    line_xrt_version: str | None = None
    blobs: Mapping[str, str] = field(default_factory=dict)
    devices: tuple[str, ...] = ()

    def link(self, path: str) -> Gitlink | None:
        return next((g for g in self.gitlinks if g.path == path), None)

    def missing(self, unused: Iterable[str] = ()) -> tuple[Gitlink, ...]:
        """Gitlinks no mirror holds; those under an unused submodule do not count."""
        skip = tuple(unused)
        return tuple(
            g
            for g in self.gitlinks
            if not g.available and not any(g.path == u or g.path.startswith(f"{u}/") for u in skip)
        )


def script_options(scripts: Mapping[str, str | None]) -> dict[str, frozenset[str] | None]:
    """Build step name -> the options its pinned build script accepts."""
    return {
        name: None if text is None else frozenset(parse_options(text))
        for name, text in scripts.items()
    }


# --- the candidate --------------------------------------------------------------------


def carry_depends(
    lists: Mapping[str, Sequence[str]], old: Sequence[str], new: Sequence[str]
) -> tuple[dict[str, list[str]], tuple[str, ...], tuple[str, ...]]:
    """Each distro's list of the starting recipe, with upstream's additions and removals.

    A recipe's list is upstream's less what only the kernel module, docs or Alveo need, in
    the distro's names: the difference between the two pinned upstream lists is applied to
    it, so what the recipe left out on purpose stays out. Returns the new lists and the
    upstream names added and removed.
    """
    added = tuple(p for p in new if p not in old)
    removed = tuple(p for p in old if p not in new)
    result: dict[str, list[str]] = {}
    for key, packages in lists.items():
        debian = key.split("-", 1)[0] in DEBIAN_FAMILY
        rename = DEBIAN_RENAMES if debian else {}
        gone = {rename.get(p, p) for p in removed}
        kept = [p for p in packages if p not in gone]
        kept += [rename.get(p, p) for p in added if rename.get(p, p) not in kept]
        result[key] = sorted(dict.fromkeys(kept))
    return result, added, removed


@dataclass(slots=True)
class Changes:
    """What the candidate changes against the recipe it started from, by topic."""

    lines: list[tuple[str, str]] = field(default_factory=list)

    def add(self, topic: str, text: str) -> None:
        self.lines.append((topic, text))

    def text(self) -> str:
        return "\n".join(f"  {topic}: {text}" for topic, text in self.lines)

    def as_record(self) -> list[dict[str, str]]:
        return [{"topic": topic, "change": text} for topic, text in self.lines]


def known_device(entry: str) -> bool:
    """`1022:17f2 rev 0x11`: whether xdnaforge's host facts name that NPU."""
    pci, _, revision = entry.partition(" rev ")
    return npu_generation(pci.split(":")[-1], revision or None) is not None


def _short(commit: str | None) -> str:
    return commit[:12] if commit else "none"


def compare(
    old: TreeFacts,
    new: TreeFacts,
    *,
    ahead: str,
    depends: tuple[Mapping[str, Sequence[str]], Mapping[str, Sequence[str]]],
    unused: tuple[Sequence[str], Sequence[str]],
    argv: Mapping[str, Sequence[str]],
) -> Changes:
    """Every difference between the starting tree and the new one, worded for a maintainer.

    `ahead` says how the new commit relates to the old (from git); `depends` and `unused`
    are (starting recipe's, candidate's); `argv` is each build step's argv.
    """
    changes = Changes()
    changes.add("pin", f"xdna-driver {_short(old.commit)} -> {_short(new.commit)} ({ahead})")
    old_links = {g.path: g for g in old.gitlinks}
    new_links = {g.path: g for g in new.gitlinks}
    for path in sorted(old_links.keys() & new_links.keys()):
        before, after = old_links[path].commit, new_links[path].commit
        if before != after:
            extra = ""
            if path == "xrt":
                extra = f" (XRT {old.xrt_describe or '?'} -> {new.xrt_describe or '?'})"
            changes.add("pin", f"{path} {_short(before)} -> {_short(after)}{extra}")
    for path in sorted(new_links.keys() - old_links.keys()):
        link = new_links[path]
        changes.add("submodule added", f"{path} at {_short(link.commit)} ({link.url})")
    for path in sorted(old_links.keys() - new_links.keys()):
        changes.add("submodule gone", f"{path} (was {_short(old_links[path].commit)})")
    for path in sorted(set(unused[0]) - set(unused[1])):
        changes.add("unused_submodules", f"{path} dropped: the new tree has no such submodule")
    old_up, new_up = set(old.upstream_depends), set(new.upstream_depends)
    for name in sorted(new_up - old_up):
        changes.add("dependency", f"upstream adds {name}")
    for name in sorted(old_up - new_up):
        changes.add("dependency", f"upstream drops {name}")
    for key in sorted(depends[1]):
        had, has = set(depends[0].get(key, ())), set(depends[1][key])
        plus, minus = sorted(has - had), sorted(had - has)
        if plus or minus:
            parts = [f"+{p}" for p in plus] + [f"-{p}" for p in minus]
            changes.add("dependency", f"build.depends.{key}: {' '.join(parts)}")
    if not any(topic == "dependency" for topic, _ in changes.lines):
        changes.add("dependency", "upstream's lists (xrtdeps.sh, amdxdna_deps.sh) unchanged")
    firmware_before = len(changes.lines)
    if old.blobs or new.blobs:
        for text in blob_changes(old.blobs, new.blobs):
            changes.add("firmware", text)
    for directory in sorted(old.firmware.keys() | new.firmware.keys()) if not new.blobs else ():
        before_fw, after_fw = old.firmware.get(directory), new.firmware.get(directory)
        if before_fw != after_fw:
            changes.add(
                "firmware",
                f"{directory} released with {after_fw or 'nothing'} (was {before_fw or 'nothing'})",
            )
    if not (old.blobs or new.blobs):
        listed = ", ".join(f"{d} {v}" for d, v in sorted(new.firmware.items())) or "none listed"
        same = " (the same as before)" if len(changes.lines) == firmware_before else ""
        changes.add("firmware", f"the line was released with {listed}{same}")
    if old.line_xrt_version or new.line_xrt_version:
        changes.add(
            "xrt version",
            f"the line's own {old.line_xrt_version or '?'} -> {new.line_xrt_version or '?'} "
            "(tools/info.json)",
        )
    if old.xrt_version != new.xrt_version:
        changes.add(
            "xrt version",
            f"a build from source reports {old.xrt_version or '?'} -> {new.xrt_version or '?'} "
            "(settings.cmake: validate.xrt_version)",
        )
    if old.devices or new.devices:
        for text in device_changes(old.devices, new.devices, known_device):
            changes.add("pci ids", text)
    for step, accepted in sorted(new.options.items()):
        before_opts = old.options.get(step)
        if accepted is None:
            changes.add("options", f"step {step}: no build script in the new tree")
            continue
        if before_opts is not None:
            gained, lost = sorted(accepted - before_opts), sorted(before_opts - accepted)
            if gained:
                changes.add("options", f"step {step}: the script now accepts {' '.join(gained)}")
            if lost:
                changes.add(
                    "options", f"step {step}: the script no longer accepts {' '.join(lost)}"
                )
        refused = unknown_options(argv.get(step, ()), set(accepted))
        if refused:
            changes.add(
                "options",
                f"step {step}: the carried argv passes {' '.join(refused)}, "
                "which the pinned script does not accept",
            )
    if not any(topic == "options" for topic, _ in changes.lines):
        steps = ", ".join(sorted(argv))
        changes.add("options", f"the pinned build scripts accept every carried option ({steps})")
    for link in new.missing(unused[1]):
        changes.add("missing", f"{link.path} {link.commit} is in no mirror ({link.fetched_from})")
    return changes


def refused_options(new: TreeFacts, argv: Mapping[str, Sequence[str]]) -> list[str]:
    """`step: option` for every carried option the new line's script does not accept."""
    refused = []
    for step, accepted in sorted(new.options.items()):
        if accepted is None:
            refused.append(f"{step}: no build script")
            continue
        refused += [f"{step}: {o}" for o in unknown_options(argv.get(step, ()), set(accepted))]
    return refused


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """Where the candidate comes from, for its header comment and description."""

    line: str
    how: str  # "branch 1.9", "tag 2.21.75", "commit c4052fc3..."
    started_from: str
    when: str  # UTC date of the run
    xrt_describe: str | None


def carried_notes(started_from: str, notes: str | None) -> str:
    """The driver contract's notes, saying that the contract was carried, not resolved."""
    if notes and notes.startswith("Carried unchanged from recipe "):
        return notes  # re-tracked: still carried from where it first came, and said so
    carried = (
        f"Carried unchanged from recipe {started_from} by `doit track`: not checked against "
        "the compatibility resolver (compat/); check it there before changing the cell's "
        "expect."
    )
    return f"{carried} {notes}" if notes else carried


def candidate_document(
    start: Mapping[str, Any],
    new: TreeFacts,
    provenance: Provenance,
    *,
    ref: str | None,
    track: str | None,
    depends: Mapping[str, Sequence[str]],
) -> dict[str, Any]:
    """The candidate recipe as plain data: the starting recipe's document with the new pins,
    dependencies and XRT version; patches, ctest counts and the baseline are not carried
    (they were proven for the other line)."""
    doc: dict[str, Any] = copy.deepcopy(dict(start))
    doc["name"] = provenance.line
    doc["description"] = (
        f"Candidate of `doit track` ({provenance.when}): xdna-driver {provenance.how} "
        f"({new.commit[:12]}) with XRT {provenance.xrt_describe or '?'}, built -nokmod; "
        f"carried from {provenance.started_from}. Unverified."
    )
    driver = dict(doc.get("driver") or {})
    driver["notes"] = carried_notes(provenance.started_from, driver.get("notes"))
    doc["driver"] = driver
    source = dict(doc["source"])
    source["commit"] = new.commit
    if ref is not None:
        source["ref"] = ref
    else:
        source.pop("ref", None)
    if track is not None:
        source["track"] = track
    submodules = []
    for item in source.get("submodules") or []:
        link = new.link(item["path"])
        if link is None:
            continue  # gone upstream: the changes say so
        entry: dict[str, Any] = {"path": item["path"], "commit": link.commit}
        if item["path"] == "xrt" and new.xrt_describe:
            entry["ref"] = new.xrt_describe
        submodules.append(entry)
    source["submodules"] = submodules
    paths = {g.path for g in new.gitlinks}
    unused = [u for u in source.get("unused_submodules") or [] if u["path"] in paths]
    source["unused_submodules"] = unused
    if not unused:
        source.pop("unused_submodules")
    # keys in the order recipes write them
    order = ("name", "url", "commit", "ref", "track", "submodules", "unused_submodules")
    doc["source"] = {k: source[k] for k in order if k in source} | {
        k: v for k, v in source.items() if k not in order
    }
    doc.pop("patches", None)
    build = dict(doc["build"])
    build["steps"] = [{k: v for k, v in s.items() if k != "ctest"} for s in build["steps"]]
    build["depends"] = {key: list(packages) for key, packages in depends.items()}
    build.pop("known_test_failures", None)
    doc["build"] = build
    validate = dict(doc["validate"])
    validate.pop("baseline", None)
    if new.xrt_version:
        validate["xrt_version"] = new.xrt_version
    doc["validate"] = validate
    return doc


def candidate_header(
    provenance: Provenance, changes: Changes, survey: str, missing: Sequence[Gitlink]
) -> str:
    """The comment block that opens a candidate recipe."""
    lines = [
        f"Candidate written by `doit track --line {provenance.line}` ({provenance.how}) on "
        f"{provenance.when}, carried from recipe {provenance.started_from}. UNVERIFIED: "
        "nothing here is built, proven or validated yet (docs/tracking.md says how a "
        "candidate becomes supported).",
        f"The driver contract is carried from {provenance.started_from} and must be checked "
        "against the compatibility resolver (compat/).",
        f"Survey: {survey}",
    ]
    if missing:
        lines.append(
            "Nested commits no local mirror holds: "
            + ", ".join(f"{g.path} {g.commit}" for g in missing)
        )
    lines.append("What changed against the starting recipe:")
    text = "\n".join(_wrap(line) for line in lines)
    body = "\n".join(f"#   {topic}: {change}" for topic, change in changes.lines)
    return f"{text}\n{body}\n"


def _wrap(text: str, width: int = 92) -> str:
    words, lines, current = text.split(), [], ""
    for word in words:
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    lines.append(current)
    return "\n".join(f"# {line}" for line in lines)


def matrix_cell(
    *,
    name: str,
    recipe: str,
    host: Mapping[str, Any],
    provenance: Provenance,
    commit: str,
) -> dict[str, Any]:
    """An `expect: unverified` cell for the candidate, on the starting line's host profile."""
    return {
        "name": name,
        "host": dict(host),
        "recipe": recipe,
        "expect": "unverified",
        "reason": (
            f"A candidate of `doit track` ({provenance.how}, {provenance.when}): not built, "
            f"proven or validated; its driver contract is carried from "
            f"{provenance.started_from} and not yet checked against the compatibility resolver."
        ),
        "evidence": (
            f"`doit track --line {recipe}` read xdna-driver {commit} from the local mirrors; "
            "no host has run it."
        ),
    }
