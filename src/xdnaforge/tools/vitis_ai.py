"""What ONNX Runtime's Vitis AI execution provider (Ryzen AI Software) prints of where a
model runs, read from the output AMD's Ryzen AI documentation gives as expected (the
installation guide's quicktest: "[Vitis AI EP] No. of Operators :   NPU   398
VITIS_EP_CPU     2", "[Vitis AI EP] No. of Subgraphs :   NPU     1 Actually running on NPU
1", "Test Passed"; releases before 1.2 say IPU for NPU and add the share, "CPU     2    IPU
398  99.50%"). The provider itself is not public source; its summary lines are its
documented interface.

With XLNX_ONNX_EP_REPORT_FILE set, the provider writes its operator assignment report
(ryzen-ai-documentation docs/modelrun.rst, "Operator Assignment Report"): JSON whose
"deviceStat" lists "all", "CPU" and "NPU", each with its "nodeNum"; the NPU's count is the
nodes placed there, as the summary's operators are.

Ryzen AI's NPU compatibility check (amd/RyzenAI-SW utilities/npu_check/example.cpp, from
557e527 of 2024-11 to fe3e27f of 2025-10): for each Vitis AI EP release, "System
compatibility check for VitisAI EP <release>..." and then "OK!" (with the NPU's device id,
name and driver version) or one of "NPU type not recognized.", "Installed drivers are too
old.", "VitisAI EP is too old.", "Unknown state." followed by " Do not use VitisAI EP.". A
pure parser; nothing is run here.
"""

from __future__ import annotations

import re

_RUNNING_RE = re.compile(r"Actually running on (?:NPU|IPU) +(\d+)")
_ON_NPU_RE = re.compile(r"\b(?:NPU|IPU|VAIML) +(\d+)")
# ONNX Runtime's logger before each line when its verbose log is on (ostream_sink.cc:
# "[<severity>:<category>:<logger id>, <location>] <message>"); the provider's summary is
# then one line per count
_ORT_PREFIX_RE = re.compile(r"^[ \t]*\[[VIWEF]:onnxruntime:[^\]\n]*\] ?", re.M)
_SUMMARY_LINES = 4  # the counts of one heading: NPU, CPU, and the "Actually running" line
# "[Vitis AI EP] No. of Subgraphs :", later releases "No. of Subgraphs supported by Vitis AI
# EP: VAIML  1"; the same for Operators
_HEADING_RE = re.compile(
    r"\[Vitis AI EP\] No\. of (Subgraphs|Operators)(?: supported by Vitis AI EP)? ?:"
)


def _summary(lines: list[str], heading: str) -> list[str]:
    """Each `[Vitis AI EP] No. of <heading>` with what the provider prints under it: the rest
    of its line, or the lines after it up to the next heading when the log puts each count
    on its own line."""
    found = []
    for index, line in enumerate(lines):
        at = _HEADING_RE.search(line) if "[Vitis AI EP]" in line else None
        if at is None or at.group(1) != heading:
            continue
        block = [line[at.end() :]]
        for after in lines[index + 1 : index + 1 + _SUMMARY_LINES]:
            if "[Vitis AI EP]" in after:
                break
            block.append(after)
        found.append("\n".join(block))
    return found


def on_npu(text: str) -> str | None:
    """ "Vitis AI EP: 1 subgraph(s) running on the NPU" (or the operators it placed there)
    when the provider's summary says the model runs on the NPU; None otherwise."""
    if "[Vitis AI EP]" not in text:
        return None
    lines = (_ORT_PREFIX_RE.sub("", text) if "onnxruntime:" in text else text).splitlines()
    for block in _summary(lines, "Subgraphs"):
        running = _RUNNING_RE.search(block)
        if running and int(running.group(1)) > 0:
            return f"Vitis AI EP: {running.group(1)} subgraph(s) running on the NPU"
        placed = 0 if running else sum(int(n) for n in _ON_NPU_RE.findall(block))
        if placed > 0:  # a release that prints no "Actually running" line
            return f"Vitis AI EP: {placed} subgraph(s) placed on the NPU"
    for block in _summary(lines, "Operators"):
        placed = sum(int(n) for n in _ON_NPU_RE.findall(block))
        if placed > 0:
            return f"Vitis AI EP: {placed} operator(s) placed on the NPU"
    return None


_REPORT_NPU_RE = re.compile(r'"name"\s*:\s*"NPU"\s*,\s*"nodeNum"\s*:\s*(\d+)')


def report_on_npu(text: str) -> str | None:
    """ "Vitis AI EP report: 416 node(s) placed on the NPU" when the provider's operator
    assignment report (module doc) places nodes on the NPU; None otherwise."""
    if '"deviceStat"' not in text:
        return None
    placed = _REPORT_NPU_RE.search(text)
    if placed is None or int(placed.group(1)) == 0:
        return None
    return f"Vitis AI EP report: {placed.group(1)} node(s) placed on the NPU"


# ONNX Runtime's get_available_providers() or a session's get_providers(), as Python
# prints the list it returns, alone or after a label ("session providers: [...]", "Active
# execution providers (priority order): [...]"), or the same list joined by commas after a
# label naming providers, the Vitis AI EP first ("providers: VitisAIExecutionProvider,
# CPUExecutionProvider")
_PROVIDERS_RE = re.compile(
    r"^(?:\w[\w ()-]{0,59}[:=] ?)?\[(?:'\w+ExecutionProvider', )*'VitisAIExecutionProvider'"
    r"[^\]\n]*\]"
    r"|^[ \t]*(?:\w+ )?(?:execution )?providers?\b[\w ()-]{0,40}[:=][ \t]*VitisAIExecutionProvider"
    r"(?:,[ \t]*\w+ExecutionProvider)*[ \t]*$"
    # or the same list as JSON writes it, under a key naming providers, on one line or one
    # element a line ('"actual_providers": [\n    "VitisAIExecutionProvider",')
    r'|^[ \t]*"\w*providers?"[ \t]*:[ \t]*\[\s*"VitisAIExecutionProvider"',
    re.M | re.I,
)
# the provider's own count of the graph's nodes it runs (custom_op.cpp, Ryzen AI 1.0 and
# later: "Vitis AI EP running 348 Nodes"), as glog prints it
_RUNNING_NODES_RE = re.compile(r"\] +Vitis AI EP running (\d+) Nodes\b")


def provider_listed(text: str) -> str | None:
    """ "ONNX Runtime lists the Vitis AI execution provider" when a printed
    `get_available_providers()` has it (the Ryzen AI runtime is installed); None otherwise."""
    if _PROVIDERS_RE.search(text):
        return "ONNX Runtime lists the Vitis AI execution provider (VitisAIExecutionProvider)"
    return None


def nodes_running(text: str) -> str | None:
    """ "Vitis AI EP: 348 node(s) running" when the provider says it runs nodes of the
    graph (on the NPU: the provider runs nothing elsewhere); None otherwise."""
    for match in _RUNNING_NODES_RE.finditer(text):
        if int(match.group(1)) > 0:
            return f"Vitis AI EP: {match.group(1)} node(s) running"
    return None


_CHECK_RE = re.compile(
    r"^System compatibility check for VitisAI EP (\S+?)\.\.\.\s*\n"
    r"\s*(OK!|NPU type not recognized\.|Installed drivers are too old\.|VitisAI EP is too old\."
    r"|Unknown state\.)",
    re.M,
)


def npu_checks(text: str) -> list[tuple[str, str]]:
    """(Vitis AI EP release, "OK!" or the check's refusal) of each check npu_check printed."""
    return [(match.group(1), match.group(2)) for match in _CHECK_RE.finditer(text)]
