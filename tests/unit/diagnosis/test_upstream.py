"""The catalogue: where a line comes from, by its template."""

from __future__ import annotations

import re

from xdnaforge.diagnosis.knowledge import load_knowledge
from xdnaforge.diagnosis.log_verdict import judge
from xdnaforge.diagnosis.upstream import Message, catalogue, expand, parse_catalogue

ONE = """{"schema": 2, "sources": [{"repo": "Xilinx/XRT", "commit": "a1", "label": "2.19"},
 {"repo": "Xilinx/XRT", "commit": "b2", "label": "2.20"}],
 "messages": [
  {"component": "xrt", "level": "error", "file": "core/common/module_loader.cpp",
   "function": "module_path", "template": "No such library '%s'",
   "pattern": "No such library '.*?'",
   "family": "device-access", "seen": "0-1"},
  {"component": "flm", "level": "error", "file": "src/main.cpp", "function": "main",
   "template": "Error code:", "pattern": "Error code:", "family": "command", "seen": "1"}]}
"""


def test_releases_that_print_a_template_are_read_from_its_ranges() -> None:
    assert expand("0-2,5") == (0, 1, 2, 5)
    message = parse_catalogue(ONE).locate("what():  No such library '/opt/x/libxrt_core.so.2'")
    assert message is not None
    assert message.family == "device-access"
    assert message.commits == ("a1", "b2")
    assert message.printed_by() == "printed by XRT 2.19 .. XRT 2.20 (2 releases)"


def test_a_template_of_too_few_words_is_not_located_on_its_own() -> None:
    assert parse_catalogue(ONE).locate("make: Error code: 2") is None


def test_the_shipped_catalogue_knows_userspace_throw_sites() -> None:
    message = catalogue().locate("Error:  No such device with index '0'")
    assert message is not None
    assert message.family == "device-access"
    assert message.releases


ROWS = """{"schema": 3, "fields": ["component", "level", "file", "function", "template",
 "pattern", "seen", "family"],
 "sources": [{"repo": "Xilinx/XRT", "commit": "a1", "label": "2.19"},
 {"repo": "Xilinx/XRT", "commit": "b2", "label": "2.20"}],
"messages": [
["xrt", "error", "core/common/module_loader.cpp", "module_path", "No such library '%s'",
 "No such library '.*?'", "0-1", "device-access"],
["flm", "error", "src/main.cpp", "main", "Error code:", "Error code:", "1", "command", true]
]}
"""


def test_schema_3_rows_read_as_the_same_messages_as_schema_2_objects() -> None:
    rows, objects = parse_catalogue(ROWS), parse_catalogue(ONE)
    assert [m.template for m in rows.messages] == [m.template for m in objects.messages]
    assert [(m.family, m.seen, m.regex) for m in rows.messages] == [
        (m.family, m.seen, m.regex) for m in objects.messages
    ]
    # the ninth column marks a caller; a row without it is not one
    assert [m.caller for m in rows.messages] == [False, True]


_SPEC_RE = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:ll|l|z|hh|h)?([diuxXpsc])|%\d+%")
_SAMPLE = {"d": "-22", "i": "-22", "u": "7", "x": "1f", "X": "1F", "p": "0000000012345678"}


def printed(message: Message) -> str:
    """The line a template prints, its conversions given plain values, as the driver prefixes
    it (`dev_err`: "amdxdna <device>: <function>: ...")."""
    text = _SPEC_RE.sub(lambda m: _SAMPLE.get(m.group(1) or "", "foo"), message.template)
    text = text.replace("{}", "foo")
    if message.component == "amdxdna":
        return f"amdxdna 0000:c5:00.1: {message.function}: {text}"
    return text


def test_a_line_that_prints_an_error_template_is_never_unknown() -> None:
    """Every error template of the shipped catalogue, printed: where the line is placed by a
    template (its own or a longer one it also prints), doctor calls it a failure, in that
    template's family or a specific entry's; a note is never a failure."""
    generic = {e.code for e in load_knowledge() if e.generic}
    judged = 0
    misses: list[str] = []
    for message in catalogue().messages:
        if message.level != "error":
            continue
        line = printed(message)
        located = catalogue().locate(line)
        if located is None or located.level != "error":
            continue  # too few words to say whose it is ("Time Out"), or a rendering mismatch
        judged += 1
        verdict = judge(line + "\n")
        errors = [d for d in verdict.diagnoses if d.severity == "error"]
        if located.family == "notes":
            if errors:
                misses.append(f"note called a failure: {line}")
            continue
        if not errors:
            misses.append(f"{verdict.status}: {line}")
        elif errors[0].code in generic and errors[0].family != located.family:
            # a specific entry may name another family ("failed to init smu": power);
            # a generic one speaks for the template's family only
            misses.append(f"{errors[0].family} instead of {located.family}: {line}")
    assert judged > 3000
    assert not misses, "\n".join(misses[:20])


def test_a_shim_error_printed_without_its_errno_suffix_is_still_the_shims() -> None:
    # shim_err() appends " (err=%d)"; a program printing the exception its own way drops it
    line = "[!] Kernel access failed: No valid DPU kernel found in xclbin"
    located = catalogue().locate(line)
    assert located is not None
    assert located.template.endswith(" (err=%d)")
    assert located.family == "hwctx"
    assert catalogue().locate(line + " (err=-22)") == located


def test_a_templates_literal_pieces_are_looked_for_in_order_before_its_regex() -> None:
    from xdnaforge.diagnosis.upstream import literal_pieces

    assert literal_pieces("Get handle of %s%s failed") == ("get handle of", "failed")
    assert literal_pieces("%d%% done: %s") == ("% done:",)  # "%%" prints "%"
    assert literal_pieces("Open %s failed (err=%d)") == ("open", "failed")  # shim_err's suffix
    message = catalogue().locate("Get handle of libxrt_core.so: xclbin_0 failed")
    assert message is not None
    assert message.in_order("get handle of libxrt_core.so: xclbin_0 failed")
    # the pieces out of their order, or one missing: no line of this template
    assert not message.in_order("failed: get handle of x")
    assert catalogue().locate("Get handle of " * 600) is None
