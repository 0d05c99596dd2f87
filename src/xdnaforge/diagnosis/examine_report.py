"""xrt-smi / xbutil examine's host report, read by the layouts generated from XRT's sources
(data/report_layouts.json, scripts/gen_report_layouts.py): its device list and "0 devices
found", the device tables (printRyzenDevices', printAlveoDevices'), the XRT section's rows
printed only from an enumerated NPU, the platform report's rows (ReportRyzenPlatform) and
the JSON report's host.devices, the NPU device reports (smi_ryzen.cpp's list) and the
firmware's parsed event trace. Pure.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

LAYOUTS = Path(__file__).resolve().parent / "data" / "report_layouts.json"


@functools.cache
def _document() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(LAYOUTS.read_text("utf-8"))
    return found


def layouts() -> list[dict[str, Any]]:
    """The distinct layouts of every XRT release (data/report_layouts.json), read once."""
    found: list[dict[str, Any]] = _document()["layouts"]
    return found


@functools.cache
def npu_report_headings() -> tuple[dict[str, str], frozenset[str]]:
    """The headings of the device reports xrt-smi offers on an NPU (smi_ryzen.cpp's list:
    aie-partitions, telemetry, preemption, clocks), each to its report's name, and the lines
    they print instead of rows when the device's answer was empty, from every release
    (data/report_layouts.json's npu_reports)."""
    headings: dict[str, str] = {}
    empty: set[str] = set()
    for report in _document().get("npu_reports", ()):
        for title in report["titles"]:
            headings[title] = report["report"]
        empty |= set(report["empty"])
    return headings, frozenset(empty)


@functools.cache
def event_trace_headers() -> tuple[re.Pattern[str], ...]:
    """The header rows xrt-smi prints above the firmware's parsed event trace, each a
    pattern of its labels in order (data/report_layouts.json's event_trace_headers)."""
    return tuple(
        re.compile(r"^[ \t]*" + r"[ \t]+".join(map(re.escape, h["labels"])) + r"[ \t]*$")
        for h in _document().get("event_trace_headers", ())
    )


# a parsed event, as format_event_row prints it: the firmware's timestamp, then the event's
# name ("12297615613378452910 partition_teardown ...")
_EVENT_ROW_RE = re.compile(r"^[ \t]*\d{6,20}[ \t]+([a-z][a-z0-9_]{2,60})\b")


def event_trace(body: str) -> str | None:
    """The firmware's event trace as xrt-smi parsed it: its header row, then an event's row
    (the events are the NPU firmware's own records, read from the device)."""
    if "Timestamp" not in body:
        return None
    lines = body.splitlines()
    for index, line in enumerate(lines):
        if len(line) > 200 or not any(h.match(line) for h in event_trace_headers()):
            continue
        row = next((text for text in lines[index + 1 : index + 4] if text.strip()), "")
        event = _EVENT_ROW_RE.match(row)
        if event is not None:
            return f"xrt-smi's event trace: the NPU firmware's events ({event.group(1)}, ...)"
    return None


def npu_report(body: str) -> str | None:
    """A device report of xrt-smi's on an NPU printed with the device's answer: its heading
    alone on a line, then a row of it (indented, or a table's row), not an empty answer
    ("No telemetry information available"); in a log that shows xrt-smi (or xbutil). The
    report's rows are the driver's answers to the queries the report makes of the opened
    device."""
    if "xrt-smi" not in body and "xbutil" not in body:
        return None
    headings, empty = npu_report_headings()
    lines = body.splitlines()
    for index, line in enumerate(lines):
        title = line.strip()
        if len(title) > 40 or title not in headings:
            continue
        row = next((text for text in lines[index + 1 : index + 4] if text.strip()), None)
        if row is None or not (row[:1].isspace() or row.lstrip().startswith("|")):
            continue
        answer = row.strip()
        if answer in empty or answer.startswith("No "):
            continue
        said = f"{title}: {answer[:60]}"
        return f"xrt-smi's {headings[title]} report: the NPU's driver answered ({said})"
    return None


@functools.cache
def empty_device_lists() -> re.Pattern[str]:
    """Each release's device-list heading followed by its "0 devices found", from the
    layouts generated from XRT's sources (data/report_layouts.json)."""
    pairs = {(x["device_list"], x["no_devices"]) for x in layouts() if x["device_list"]}
    return re.compile(
        "|".join(rf"^{re.escape(head)}\s*\n\s*{re.escape(none)}" for head, none in sorted(pairs)),
        re.M,
    )


@functools.cache
def device_rows() -> re.Pattern[str]:
    """The XRT section's rows that every release since 2.18 prints from an enumerated NPU
    only ("NPU Firmware Version", under `device_class::type::ryzen`), as the generated
    layouts give their format ("  %-20s : %s\n")."""
    rows = {
        (row["format"], row["label"])
        for layout in layouts()
        for row in layout.get("device_rows", ())
        if row["npu"]
    }
    branches = [_row_pattern(fmt, label) for fmt, label in sorted(rows)]
    return re.compile("|".join(branches))


@functools.cache
def table_headings() -> dict[tuple[str, ...], str]:
    """The header rows of examine's device tables, as cell names, from the generated
    layouts: printRyzenDevices' ("BDF", "Name", ...) and printAlveoDevices' (Shell, Logic
    UUID, ...), which ReportHost prints only when a device of that class was enumerated."""
    headings: dict[tuple[str, ...], str] = {}
    for layout in layouts():
        for key, kind in (("device_table", "NPU"), ("other_table", "device")):
            columns = layout.get(key, {}).get("columns")
            if columns:
                headings[tuple(c for c in columns if c != ":")] = kind
    return headings


def _row_pattern(fmt: str, label: str) -> str:
    """A layout row's format ("  %-20s : %s\n") as a pattern of a whole line with its label
    and its value (group 1)."""
    pieces = re.split(r"(%-?\d*s)", fmt.rstrip("\n"))  # text, spec, text, spec, text
    # the label padded to its width; the value from its first to its last visible character
    # (greedy, so that a long line is read in linear time)
    specs = iter((re.escape(label) + r"\s*", r"(\S(?:.*\S)?)"))
    pattern = "".join(
        next(specs, ".*?") if i % 2 else re.sub(r"(?:\\ )+", r"\\s*", re.escape(text))
        for i, text in enumerate(pieces)
    )
    # a line as a paste keeps it: indentation, padding and trailing spaces may be lost or
    # added; each run of spaces is one \s* (two in a row would backtrack on a long line)
    return re.sub(r"(?:\\s\*)+", r"\\s*", rf"^\s*{pattern}\s*$")


@functools.cache
def platform_layouts() -> tuple[tuple[re.Pattern[str], ...], ...]:
    """Each release's rows of `examine --report platform` on an NPU, in order, from the
    generated layouts (ReportRyzenPlatform::writeReport)."""
    found = {
        tuple((row["format"], row["label"]) for row in layout.get("platform_rows", ()))
        for layout in layouts()
    }
    return tuple(
        tuple(re.compile(_row_pattern(fmt, label)) for fmt, label in rows)
        for rows in sorted(found, key=len, reverse=True)
        if rows
    )


def platform_report(body: str) -> str | None:
    """The NPU's platform report: its "Platform" heading, then every row of a release's
    layout in order, each with a value (N/A is none). Each value is the opened device's
    answer to a query, so the report shows that the driver answered; returns the name."""
    if "Platform" not in body:
        return None
    lines = [line.strip() for line in body.splitlines()]
    for index, line in enumerate(lines):
        if line != "Platform":
            continue
        for rows in platform_layouts():
            values = []
            for pattern, text in zip(rows, lines[index + 1 : index + 1 + len(rows)], strict=False):
                match = pattern.match(text)
                if match is None or match.group(1).strip().upper() == "N/A":
                    break
                values.append(match.group(1).strip())
            if len(values) == len(rows):
                return values[0]
    return None


# ReportRyzenPlatform.cpp (2.19 on): boost::format("%-23s  : %s Watts\n") % "Estimated Power",
# printed with a figure only when the opened NPU answered the power query (else without
# "Watts"); validate's header prints it too ("    %-22s: %s Watts")
_ESTIMATED_POWER_RE = re.compile(
    r"^[ \t]*Estimated Power[ \t]*: (\d+(?:\.\d+)?) Watts[ \t]*$", re.M
)


def estimated_power(body: str) -> str | None:
    """The NPU's estimated power as xrt-smi printed it (above): the driver answered."""
    if "Estimated Power" not in body or ("xrt-smi" not in body and "xbutil" not in body):
        return None
    found = _ESTIMATED_POWER_RE.search(body)
    return None if found is None else f"xrt-smi: the NPU's estimated power ({found.group(1)} W)"


def listed_table(body: str) -> str | None:
    """A device table's header row right under examine's device-list heading: the report
    was cut off before its rows, but the table is printed only when it has one."""
    if "Device" not in body or "BDF" not in body:
        return None
    lines = body.splitlines()
    for index, line in enumerate(lines[:-1]):
        if line.strip() not in ("Device(s) Present", "Devices present"):
            continue
        row = re.split(r"\|+|\s{2,}", lines[index + 1].strip())
        cells = tuple(c for c in row if c and c != ":")
        kind = table_headings().get(cells)
        if kind is not None:
            return kind
    return None


def json_devices(body: str) -> str:
    """The devices of an examine report written as JSON (`-f JSON`): host.devices."""
    if '"host"' not in body or "{" not in body:
        return ""
    from xdnaforge.tools.xrt_smi import parse_examine_json

    try:
        examine = parse_examine_json(body[body.index("{") :])
    except (ValueError, AttributeError):
        return ""
    return ", ".join(d.name or d.bdf for d in examine.devices if d.bdf)


def no_json_devices(body: str) -> str | None:
    """A JSON examine report whose host.devices is empty (boost's ptree writes "")."""
    if '"host"' not in body or '"devices"' not in body:
        return None
    try:
        data = json.loads(body[body.index("{") :])
    except ValueError:
        return None
    system = data.get("system") if isinstance(data, dict) else None
    host = system.get("host") if isinstance(system, dict) else None
    if isinstance(host, dict) and "devices" in host and host["devices"] in ("", [], {}):
        return 'JSON "host": {"devices": ""}'
    return None


def enumerated_npu(body: str) -> str | None:
    """An examine report's XRT section that printed the firmware version of the first NPU
    XRT enumerated: a device was found even where the report is cut off before its list."""
    if "Firmware Version" not in body:
        return None
    in_xrt = False
    for line in body.splitlines():
        text = line.strip()
        if text == "XRT":
            in_xrt = True
        elif in_xrt and text and ":" not in text:
            in_xrt = False  # the next heading (Device(s) Present)
        elif in_xrt:
            match = device_rows().match(text)
            if match:
                value = next(group for group in match.groups() if group is not None)
                if value.strip().upper() != "N/A":
                    return value.strip()
    return None


def no_devices(body: str) -> str | None:
    """ "Device(s) Present / 0 devices found" when examine listed no device."""
    if "devices found" not in body:
        return None
    match = empty_device_lists().search(body)
    return " / ".join(part.strip() for part in match.group(0).splitlines()) if match else None


# xrt-smi examine -r context-health (XRT src/runtime_src/core/tools/xbutil2/ContextHealth/
# OO_ContextHealth.cpp, generate_report: "  Context Health Information (PID: <pid>):", then
# a Table2D of "Ctx Id", ..., "Fatal Err Type", ... per context, values "0x%x")
_HEALTH_RE = re.compile(r"^\s*Context Health Information \(PID: \d+\):\s*$", re.M)
_ROW_RE = re.compile(r"^\s*\|(.*)\|\s*$")


def context_health(body: str) -> list[tuple[str, str]]:
    """(context id, fatal error type) of each context the report lists."""
    found: list[tuple[str, str]] = []
    for match in _HEALTH_RE.finditer(body):
        columns: list[str] = []
        for line in body[match.end() :].lstrip("\n").splitlines():
            row = _ROW_RE.match(line)
            if row is None:
                break
            cells = [cell.strip() for cell in row.group(1).split("|")]
            if not columns:
                columns = cells
            elif not all(set(cell) <= {"-"} for cell in cells):
                values = dict(zip(columns, cells, strict=False))
                if "Ctx Id" in values and "Fatal Err Type" in values:
                    found.append((values["Ctx Id"], values["Fatal Err Type"]))
    return found
