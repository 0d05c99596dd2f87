#!/usr/bin/env python3
"""Extract the text layouts of `xrt-smi validate` / `xbutil validate` and of the examine
report's device list from every XRT release a snapshot holds, and write
src/xdnaforge/diagnosis/data/report_layouts.json.

Run by hand (never at run time, never by a test) on a fetched snapshot:

    python3 scripts/gen_report_layouts.py --xrt /work/.mirror/Xilinx+XRT/repo

What is kept per distinct layout: the releases that print it, and its format strings with
the label each one prints (`boost::format("%-26s: [%s]\\n") % "Validate Device"`), the
test header's format ("Test %d [%s]"), the examine report's heading of the device list
("Devices present" in 2.17, "Device(s) Present" later) and the rows of its XRT section that
are printed from the first enumerated device only (`fill_xrt_versions`: "NPU Firmware
Version" under `device_class::type::ryzen` from 2.18, "Firmware Version" under
`!available_devices.empty()` in 2.17), with `npu` true where the source prints the row for an
NPU only: a report cut off before its device list still shows that XRT found a device; and
the rows of `examine --report platform` on an NPU (ReportRyzenPlatform: Name, Power Mode,
Total Columns), each the opened device's answer. Beside them, `npu_reports`: the device
reports xrt-smi offers on an NPU (smi_ryzen.cpp's examine list), each with the headings its
writeReport prints, the lines it prints instead of rows when the answer is empty, and the
releases that have it; and `event_trace_headers`, the labels of the header row xrt-smi
prints above the firmware's parsed event trace (EventTraceBase.cpp, get_header_row). No
code is kept.
`tests/unit/diagnosis/test_readers.py` renders a passing report in every layout
and holds the readers to it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_upstream_messages import Snapshot, release_refs

VALIDATE = (
    "src/runtime_src/core/tools/xbutil2/SubCmdValidate.cpp",
    "src/runtime_src/core/tools/common/XBValidateUtils.cpp",
)
HOST = "src/runtime_src/core/tools/common/reports/ReportHost.cpp"
PLATFORM = "src/runtime_src/core/tools/common/reports/platform/ReportRyzenPlatform.cpp"
UTILITIES = "src/runtime_src/core/tools/common/XBUtilities.cpp"
TABLE = "src/runtime_src/core/tools/common/Table2D.cpp"
_LABELLED_RE = re.compile(r'boost::format\("((?:[^"\\]|\\.)*)"\)\s*%\s*"([^"]+)"')
_TEST_HEADER_RE = re.compile(r'boost::format\("(Test %d \[%s\][^"]*)"\)')
_TEST_LINE_RE = re.compile(r'boost::format\("((?:[^"\\]|\\.)*)"\)\s*%\s*test_desc\b')
_NO_DEVICES_RE = re.compile(r'"(\s*0 devices found)"')
_DEVICE_LIST_RE = re.compile(r'"(Devices present|Device\(s\) Present)\\n"')
# a row of the XRT section whose value is read from the first enumerated device
_DEVICE_ROW_RE = re.compile(
    r'boost::format\("((?:[^"\\]|\\.)*)"\)\s*%\s*"((?:NPU )?Firmware Version)"'
)
# the NPU device list: printRyzenDevices' Table2D columns, and how Table2D prints a cell
_RYZEN_TABLE_RE = re.compile(r"printRyzenDevices\([^)]*\)\s*\{(.*?)\n\}", re.S)
_ALVEO_TABLE_RE = re.compile(r"printAlveoDevices\([^)]*\)\s*\{(.*?)\n\}", re.S)
_HEADER_RE = re.compile(r'HeaderData\s+(\w+)\s*=\s*\{"([^"]*)"')
_HEADERS_RE = re.compile(r"table_headers\s*=\s*\{([^}]*)\}")
_CELL_RE = re.compile(r'appendToOutput\(std::string.*?boost::format fmt\("([^"]*)"\)', re.S)
_PADDING_RE = re.compile(r"m_inter_entry_padding\((\d+)\)")
_GUARD_SPAN = 1200  # the characters before a row in which its condition is written
# ReportRyzenPlatform::writeReport: "Platform\n", then per platform the rows it reads from
# the device's platform query (static region's name, power mode, total columns)
_PLATFORM_REPORT_RE = re.compile(r"ReportRyzenPlatform::writeReport\(.*?\n\}", re.S)


def layout(snap: Snapshot, commit: str) -> dict[str, object] | None:
    texts = {}
    wanted = (*VALIDATE, HOST, PLATFORM, UTILITIES, TABLE)
    for path, blob in snap.blobs(commit, lambda p: p in wanted):
        texts[path] = snap.read(blob)
    validate = "\n".join(texts.get(path, "") for path in VALIDATE)
    if "Validate Device" not in validate:
        return None
    lines = sorted(
        {
            (fmt.replace("\\n", "\n"), label)
            for fmt, label in _LABELLED_RE.findall(validate + texts.get(PLATFORM, ""))
            if label
            in ("Validate Device", "Platform", "Power Mode", "Performance Mode", "Test Status")
        }
    )
    header = _TEST_HEADER_RE.search(validate)
    test_line = _TEST_LINE_RE.search(validate)
    devices = _DEVICE_LIST_RE.search(texts.get(HOST, ""))
    none = _NO_DEVICES_RE.search(texts.get(HOST, ""))
    return {
        "device_rows": device_rows(texts.get(HOST, "") + "\n" + texts.get(UTILITIES, "")),
        "device_table": device_table(texts.get(HOST, ""), texts.get(TABLE, "")),
        "other_table": device_table(texts.get(HOST, ""), texts.get(TABLE, ""), _ALVEO_TABLE_RE),
        "lines": [{"format": fmt, "label": label} for fmt, label in lines],
        "platform_rows": platform_rows(texts.get(PLATFORM, "")),
        "test_header": header.group(1) if header else "",
        "test_line": test_line.group(1).replace("\\n", "\n") if test_line else "",
        "device_list": devices.group(1).replace("\\(", "(") if devices else "",
        "no_devices": none.group(1).strip() if none else "",
    }


def device_table(
    host: str, table: str, function_re: re.Pattern[str] = _RYZEN_TABLE_RE
) -> dict[str, object]:
    """printRyzenDevices' columns in order, the Table2D cell format (2.19 on closes each cell
    with "|" and opens a row with "|"; 2.18 opens each cell with one; 2.17 prints bare
    cells) and the spaces after each cell (m_inter_entry_padding). With printAlveoDevices'
    pattern: the table of the other device classes (Alveo, and edge NPUs with zocl)."""
    function = function_re.search(host)
    cell = _CELL_RE.search(table)
    padding = _PADDING_RE.search(table)
    if function is None or cell is None or padding is None:
        return {}
    names = dict(_HEADER_RE.findall(function.group(1)))
    order = _HEADERS_RE.search(function.group(1))
    columns = [names[v.strip()] for v in order.group(1).split(",")] if order else []
    return {
        "columns": columns,
        "cell": cell.group(1),
        "row_start": "|" if "prefix + '|'" in table else "",
        "padding": int(padding.group(1)),
    }


def device_rows(source: str) -> list[dict[str, object]]:
    """The XRT section's rows printed only when a device was enumerated: each one's format,
    label and whether its condition names the NPU's device class (`npu`)."""
    rows = {}
    for match in _DEVICE_ROW_RE.finditer(source):
        before = source[max(0, match.start() - _GUARD_SPAN) : match.start()]
        if "available_devices" not in before:
            continue  # not a row of the host report's first device
        # "Firmware Version" is the else branch of the same condition (other device classes)
        npu = match.group(2).startswith("NPU ") and "device_class::type::ryzen" in before
        rows[match.group(2)] = {
            "format": match.group(1).replace("\\n", "\n"),
            "label": match.group(2),
            "npu": npu,
        }
    return [rows[label] for label in sorted(rows)]


def platform_rows(source: str) -> list[dict[str, str]]:
    """The rows `examine --report platform` prints under its "Platform" heading for an NPU,
    in order (ReportRyzenPlatform::writeReport), up to the blank line before its power
    estimate: each one's format and label. Every value is the driver's answer to a query of
    the opened device."""
    function = _PLATFORM_REPORT_RE.search(source)
    if function is None or '"Platform\\n"' not in function.group(0):
        return []
    rows = []
    for fmt, label in _LABELLED_RE.findall(function.group(0)):
        if "Power" in label and "Mode" not in label:
            break  # "Estimated Power", printed after std::endl: not a row of the first block
        rows.append({"format": fmt.replace("\\n", "\n"), "label": label})
    return rows


# the reports xrt-smi offers on an NPU (smi_ryzen.cpp's examine list: name, description,
# visibility), each a Report subclass constructed with that name (Report("preemption", ...))
SMI_RYZEN = "src/runtime_src/core/common/smi/smi_ryzen.cpp"
REPORTS = "src/runtime_src/core/tools/common/reports/"
_SMI_REPORT_RE = re.compile(r'\{"([a-z][a-z-]*)", "[^"]*", "(?:common|hidden)"\}')
_EXAMINE_LIST_RE = re.compile(r"examine_report_desc\s*=\s*\{(.*?)\n\s*\};", re.S)
_REPORT_NAME_RE = re.compile(r'\bReport\("([a-z][a-z-]*)"')
_WRITE_REPORT_RE = re.compile(r"::\s*writeReport\s*\(.*?\n\}", re.S)
# what writeReport prints: its heading alone on a line, and the line it prints instead of
# the rows when the device's answer was empty ("  No hardware contexts running on device")
_TITLE_RE = re.compile(r'_output\s*<<\s*"([A-Z][^"\\]*)\\n"')
_EMPTY_RE = re.compile(r'"(\s+No [^"\\]*)\\n')
_NOT_ON_NPU = ("all", "host", "platform")  # "all" is a selection; host, platform: above


def npu_report_names(snap: Snapshot, commit: str) -> set[str]:
    """The names of the device reports smi_ryzen.cpp lists for an NPU at this commit."""
    for _path, blob in snap.blobs(commit, lambda p: p == SMI_RYZEN):
        examine = _EXAMINE_LIST_RE.search(snap.read(blob))
        if examine is None:
            return set()
        return {n for n in _SMI_REPORT_RE.findall(examine.group(1)) if n not in _NOT_ON_NPU}
    return set()


def npu_reports(snap: Snapshot, commit: str, names: set[str]) -> dict[str, dict[str, set[str]]]:
    """Per report name: the headings its writeReport prints and its empty answers."""
    headers: dict[str, str] = {}
    sources: dict[str, str] = {}
    for path, blob in snap.blobs(commit, lambda p: p.startswith(REPORTS)):
        text = snap.read(blob)
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if path.endswith(".h"):
            named = _REPORT_NAME_RE.search(text)
            if named and named.group(1) in names:
                headers[stem] = named.group(1)
        elif path.endswith(".cpp"):
            sources[stem] = text
    found: dict[str, dict[str, set[str]]] = {}
    for stem, name in headers.items():
        write = _WRITE_REPORT_RE.search(sources.get(stem, ""))
        if write is None:
            continue
        titles = set(_TITLE_RE.findall(write.group(0)))
        if titles:
            found[name] = {
                "titles": titles,
                "empty": {e.strip() for e in _EMPTY_RE.findall(write.group(0))},
            }
    return found


# the firmware's event trace as xrt-smi parses it (examine --event-trace): its header row,
# the labels get_header_row formats, then a row per event, its timestamp first
EVENT_TRACE = "src/runtime_src/core/tools/xbutil2/EventTracing/EventTraceBase.cpp"
_HEADER_ROW_RE = re.compile(
    r"get_header_row\(\)\s*const\s*\{.*?boost::format\(fmt\)((?:\s*%\s*\"[^\"]+\")+)", re.S
)


def event_trace_header(snap: Snapshot, commit: str) -> tuple[str, ...]:
    """The labels of the event trace's header row at this commit, in order (none before the
    parser existed)."""
    for _path, blob in snap.blobs(commit, lambda p: p == EVENT_TRACE):
        found = _HEADER_ROW_RE.search(snap.read(blob))
        if found:
            return tuple(re.findall(r'"([^"]+)"', found.group(1)))
    return ()


def collect_npu_reports(snap: Snapshot, commits: list[tuple[str, str]]) -> list[dict[str, object]]:
    """Each NPU report any release lists, with its headings and empty answers over every
    release that has it, and those releases' labels."""
    names: set[str] = set()
    for _label, commit in commits:
        names |= npu_report_names(snap, commit)
    titles: dict[str, set[str]] = {}
    empty: dict[str, set[str]] = {}
    releases: dict[str, list[str]] = {}
    for label, commit in commits:
        for name, found in npu_reports(snap, commit, names).items():
            titles.setdefault(name, set()).update(found["titles"])
            empty.setdefault(name, set()).update(found["empty"])
            releases.setdefault(name, []).append(label)
    return [
        {
            "report": name,
            "titles": sorted(titles[name]),
            "empty": sorted(empty[name]),
            "releases": releases[name],
        }
        for name in sorted(titles)
    ]


def collect_event_trace_headers(
    snap: Snapshot, commits: list[tuple[str, str]]
) -> list[dict[str, object]]:
    """Each distinct event-trace header row, with the labels of the releases that print it."""
    headers: dict[tuple[str, ...], list[str]] = {}
    for label, commit in commits:
        header = event_trace_header(snap, commit)
        if header:
            headers.setdefault(header, []).append(label)
    return [
        {"labels": list(labels), "releases": labelled}
        for labels, labelled in sorted(headers.items())
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xrt", type=Path, required=True)
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent.parent
        / "src/xdnaforge/diagnosis/data/report_layouts.json",
    )
    options = parser.parse_args()
    snap = Snapshot(options.xrt)
    commits = [
        (label, commit)
        for ref, label in release_refs(snap, "Xilinx/XRT")
        if (commit := snap.rev(ref)) is not None
    ]
    layouts: dict[str, dict[str, object]] = {}
    for label, commit in commits:
        found = layout(snap, commit)
        if found is None:
            continue
        key = json.dumps(found, sort_keys=True)
        entry = layouts.setdefault(key, {**found, "releases": []})
        releases = entry["releases"]
        assert isinstance(releases, list)
        releases.append({"label": label, "commit": commit})
    document = {
        "schema": 1,
        "event_trace_headers": collect_event_trace_headers(snap, commits),
        "generated_by": "scripts/gen_report_layouts.py",
        "repo": "Xilinx/XRT",
        "layouts": list(layouts.values()),
        "npu_reports": collect_npu_reports(snap, commits),
    }
    options.output.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    count = sum(len(v["releases"]) for v in layouts.values())  # type: ignore[arg-type,misc]
    print(f"{len(layouts)} layouts from {count} releases -> {options.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
