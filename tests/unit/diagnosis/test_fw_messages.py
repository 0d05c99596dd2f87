from __future__ import annotations

import json
from pathlib import Path

from xdnaforge.diagnosis.fw_messages import _DATA, STATUSES, _short, answer, answer_family
from xdnaforge.diagnosis.log_verdict import judge


def test_the_firmwares_answers_are_generated_from_every_header_version() -> None:
    document = json.loads(Path(_DATA).read_text(encoding="utf-8"))
    assert document["generated_by"] == "scripts/gen_fw_messages.py"
    aie2 = document["generations"]["aie2"]
    # the status kept its value when the header renamed NPU_ to AIE2_ (May 2024)
    assert set(aie2["status"]["0x4000002"]) >= {
        "NPU_STATUS_INVALID_COMMAND",
        "AIE2_STATUS_INVALID_COMMAND",
    }
    assert "MSG_OP_CREATE_CONTEXT" in aie2["opcode"]["0x2"]
    assert "AIE4_MSG_STATUS_NOTSUPP" in document["generations"]["aie4"]["status"]["0x2"]


def test_a_refused_message_reads_as_the_request_and_the_firmwares_answer() -> None:
    line = "aie2_send_mgmt_msg_wait: command opcode 0x10f failed, status 0x4000002"
    found = answer(line)
    assert found is not None
    assert found.request == "MSG_OP_START_FW_TRACE (0x10f)"
    assert found.status == "AIE2_STATUS_INVALID_COMMAND (0x4000002)"
    assert found.family == "versions"  # a request this firmware does not implement
    # a status that names no place takes the request's family
    assert answer_family("command opcode 0x106 failed, status 0x4000003") == "hwctx"
    assert answer_family("command opcode 0x2 failed, status 0x2000003") == "hwctx"
    # the AI Engine array's own errors are the command's
    assert answer_family("command opcode 0x18 failed, status 0x1000009") == "command"
    # aie4's numbering, by the function or by an opcode only aie4 has
    assert answer_family("aie4_send_msg_wait: command opcode 0x30003 failed, status 0x2") == (
        "versions"
    )
    # no answer the firmware gives (the mailbox read failed), or no such report
    assert answer("command opcode 0x10f failed, status 0xffffffff") is None
    assert answer("opcode 0x10f") is None


def test_the_answer_makes_the_drivers_report_more_than_a_callers() -> None:
    log = (
        "aie2_send_mgmt_msg_wait: command opcode 0x10f failed, status 0x4000002\n"
        "aie2_start_fw_trace: start fw trace failed, ret 0x4000002\n"
    )
    verdict = judge(log)
    assert [(d.family, d.severity) for d in verdict.diagnoses] == [
        ("versions", "error"),
        ("notes", "warning"),
    ]
    assert "MSG_OP_START_FW_TRACE (0x10f) with AIE2_STATUS_INVALID_COMMAND" in (
        verdict.diagnoses[0].cause
    )
    # a status the headers do not name stays a caller's report behind its callee
    unknown = log.replace("status 0x4000002", "status 0x7000001", 1)
    assert [d.family for d in judge(unknown).diagnoses] == ["notes"]


def test_every_status_the_headers_ever_named_is_reviewed() -> None:
    # a new status in a header release fails here until the table says what it means
    document = json.loads(Path(_DATA).read_text(encoding="utf-8"))
    names = {
        _short(name)
        for generation in document["generations"].values()
        for names in generation["status"].values()
        for name in names
    }
    unreviewed = {n for n in names if n not in STATUSES and not n.startswith("AIE_")}
    assert unreviewed == {"SUCCESS"}
