"""The two inputs of the resolver: upstream facts (the generated data file) and a host's facts
(a YAML facts file, a record fed back, or what observe.py read from a sysroot).

Reading the data file and a facts file is all the I/O here; a wrong facts file is a ConfigError
naming file:line:col and the key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdnaforge import yamlfile
from xdnaforge.errors import ConfigError, Problem

DATA_FILE = Path(__file__).resolve().parent / "data" / "compat_facts.json"
DRIVER_SOURCES = ("in-tree", "dkms")
_VERSION_RE = re.compile(r"^\d+(\.\d+){0,3}$")


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    """`1.1.2.65` -> (1, 1, 2, 65); `0.7.0` -> (0, 7, 0); None for anything else."""
    if text is None:
        return None
    text = text.strip()
    if not _VERSION_RE.match(text):
        return None
    return tuple(int(part) for part in text.split("."))


def at_least(value: str | None, floor: str) -> bool | None:
    """value >= floor, comparing as many components as the floor names; None if unknown."""
    have, want = version_tuple(value), version_tuple(floor)
    if have is None or want is None:
        return None
    padded = have + (0,) * (len(want) - len(have))
    return padded[: len(want)] >= want


@dataclass(frozen=True, slots=True, kw_only=True)
class FirmwareFile:
    path: str  # relative to /lib/firmware: amdnpu/17f0_11/npu.sbin
    target: str | None = None  # symlink target as written (npu.sbin.1.1.2.65)
    version: str | None = None  # the `Release x.y.z.w` inside the blob (or its name)
    protocol: str | None = None  # when the host knows it: "7.2"


@dataclass(frozen=True, slots=True, kw_only=True)
class HostCompat:
    """What the resolver needs to know of one host; None = unknown."""

    kernel: str | None = None
    distro_id: str | None = None
    distro_version: str | None = None
    pci: str | None = None  # 1022:17f0
    revision: str | None = None  # 0x11
    driver_source: str | None = None  # in-tree | dkms
    drm_version: str | None = None
    driver_version: str | None = None  # a DKMS module's own version
    firmware: tuple[FirmwareFile, ...] = ()
    firmware_listed: bool = (
        False  # the list is complete (read from disk, or given): absent = absent
    )
    running_firmware: str | None = None
    userspace: dict[str, str] = field(default_factory=dict)  # package -> version
    plugin: bool | None = None  # libxrt_driver_xdna.so.2 installed (None: not read)
    kernel_log: tuple[str, ...] = ()  # the amdxdna lines of the kernel log (evidence.py)
    columns: int | None = None
    memlock_bytes: int | None = None  # None = unknown; -1 = unlimited
    cmdline: str | None = None
    origin: str = "this host"

    def as_record(self) -> dict[str, Any]:
        """The facts in the facts-file shape: a compat.json can be fed back with --facts."""
        record: dict[str, Any] = {"kernel": self.kernel}
        if self.distro_id or self.distro_version:
            record["distro"] = {"id": self.distro_id, "version": self.distro_version}
        record["npu"] = {"pci": self.pci, "revision": self.revision}
        driver: dict[str, Any] = {"source": self.driver_source, "drm_version": self.drm_version}
        if self.driver_version:
            driver["version"] = self.driver_version
        record["driver"] = driver
        if self.firmware_listed or self.firmware:
            record["firmware"] = [
                {
                    k: v
                    for k, v in (
                        ("path", f.path),
                        ("target", f.target),
                        ("version", f.version),
                        ("protocol", f.protocol),
                    )
                    if v is not None
                }
                for f in self.firmware
            ]
        if self.running_firmware:
            record["running_firmware"] = self.running_firmware
        if self.userspace or self.plugin is not None:
            record["userspace"] = dict(self.userspace)
            if self.plugin is not None:
                record["userspace"]["plugin"] = self.plugin
        if self.kernel_log:
            record["kernel_log"] = list(self.kernel_log)
        if self.columns is not None:
            record["columns"] = self.columns
        if self.memlock_bytes is not None:
            record["memlock_bytes"] = self.memlock_bytes
        if self.cmdline is not None:
            record["cmdline"] = self.cmdline
        return record


def load_upstream(path: Path = DATA_FILE) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if data.get("schema") != 2:
        raise ValueError(f"{path}: schema {data.get('schema')!r}, this xdnaforge reads 2")
    return data


class _Reader:
    """Type checks on a facts document, collecting every problem with its position."""

    def __init__(self, document: yamlfile.Document) -> None:
        self.document = document
        self.problems: list[Problem] = list(document.problems)

    def problem(self, path: tuple[str | int, ...], message: str, hint: str | None = None) -> None:
        line, column = self.document.where(path)
        self.problems.append(
            Problem(
                source=self.document.source,
                line=line,
                column=column,
                key_path=yamlfile.format_path(path),
                message=message,
                hint=hint,
            )
        )

    def mapping(self, value: Any, path: tuple[str | int, ...]) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problem(path, f"expected a mapping, got {type(value).__name__}")
            return {}
        return value

    def string(
        self, data: dict[str, Any], key: str, path: tuple[str | int, ...], version: bool = False
    ) -> str | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            written = self.document.scalars.get((*path, key), str(value))
            self.problem(
                (*path, key),
                f"expected a string, got {type(value).__name__} {value!r}",
                hint=f'quote it: "{written}"',
            )
            return None
        if version and version_tuple(value) is None:
            self.problem((*path, key), f"'{value}' is not a version like 1.1.2.65 or 0.7.0")
            return None
        return value

    def integer(self, data: dict[str, Any], key: str, path: tuple[str | int, ...]) -> int | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem((*path, key), f"expected an integer, got {type(value).__name__}")
            return None
        return value


def parse_facts(document: yamlfile.Document) -> HostCompat:
    """A facts file (the shape `compat.json` records under `facts`); ConfigError if wrong."""
    reader = _Reader(document)
    data = document.data
    if isinstance(data, dict) and isinstance(data.get("facts"), dict):
        data = data["facts"]  # a compat.json fed back
        base: tuple[str | int, ...] = ("facts",)
    else:
        base = ()
    top = reader.mapping(data, base)
    distro = reader.mapping(top.get("distro"), (*base, "distro"))
    npu = reader.mapping(top.get("npu"), (*base, "npu"))
    driver = reader.mapping(top.get("driver"), (*base, "driver"))
    source = reader.string(driver, "source", (*base, "driver"))
    if source is not None and source not in DRIVER_SOURCES:
        reader.problem(
            (*base, "driver", "source"), f"'{source}' is not one of {', '.join(DRIVER_SOURCES)}"
        )
    pci = reader.string(npu, "pci", (*base, "npu"))
    if pci is not None and not re.fullmatch(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{4}", pci):
        reader.problem((*base, "npu", "pci"), f"'{pci}' is not a PCI id like 1022:17f0")
    revision = reader.string(npu, "revision", (*base, "npu"))
    if revision is not None and not re.fullmatch(r"0x[0-9a-fA-F]{1,2}", revision):
        reader.problem((*base, "npu", "revision"), f"'{revision}' is not a revision like 0x11")
    files = []
    entries = top.get("firmware") or []
    if not isinstance(entries, list):
        reader.problem((*base, "firmware"), "expected a list of {path, target, version}")
        entries = []
    for index, entry in enumerate(entries):
        path = (*base, "firmware", index)
        item = reader.mapping(entry, path)
        name = reader.string(item, "path", path)
        if name is None:
            reader.problem(path, "a firmware entry needs `path` (relative to /lib/firmware)")
            continue
        files.append(
            FirmwareFile(
                path=name.lstrip("/").removeprefix("lib/firmware/"),
                target=reader.string(item, "target", path),
                version=reader.string(item, "version", path, version=True),
                protocol=reader.string(item, "protocol", path),
            )
        )
    userspace = dict(reader.mapping(top.get("userspace"), (*base, "userspace")))
    plugin = userspace.pop("plugin", None)
    if plugin is not None and not isinstance(plugin, bool):
        reader.problem(
            (*base, "userspace", "plugin"),
            "expected true or false (is libxrt_driver_xdna.so.2 installed)",
        )
        plugin = None
    log = top.get("kernel_log")
    if isinstance(log, str):
        log = log.splitlines()
    if log is not None and not (
        isinstance(log, list) and all(isinstance(line, str) for line in log)
    ):
        reader.problem((*base, "kernel_log"), "expected a list of kernel log lines")
        log = None
    facts = HostCompat(
        kernel=reader.string(top, "kernel", base),
        distro_id=reader.string(distro, "id", (*base, "distro")),
        distro_version=reader.string(distro, "version", (*base, "distro")),
        pci=pci.lower() if pci else None,
        revision=revision.lower() if revision else None,
        driver_source=source,
        drm_version=reader.string(driver, "drm_version", (*base, "driver"), version=True),
        driver_version=reader.string(driver, "version", (*base, "driver")),
        firmware=tuple(files),
        firmware_listed="firmware" in top,
        running_firmware=reader.string(top, "running_firmware", base, version=True),
        userspace={str(k): str(v) for k, v in userspace.items()},
        plugin=plugin,
        kernel_log=tuple(log or ()),
        columns=reader.integer(top, "columns", base),
        memlock_bytes=reader.integer(top, "memlock_bytes", base),
        cmdline=reader.string(top, "cmdline", base),
        origin=document.source,
    )
    if reader.problems:
        raise ConfigError(reader.problems)
    return facts


def load_facts(path: Path, source: str | None = None) -> HostCompat:
    """A facts file; one that cannot be read is a ConfigError from yamlfile, like any input."""
    return parse_facts(yamlfile.load(path, source))
