"""The NPU firmware's answer to a mailbox message, as the driver reports a refused one
("aie2_send_mgmt_msg_wait: command opcode 0x10f failed, status 0x4000002"): which request it
was, what the firmware answered, and the family that answer names.

Pure. The names are generated (data/fw_messages.json, written by scripts/gen_fw_messages.py
from every version of the driver's message headers: `enum aie2_msg_opcode` and `enum
aie2_msg_status`, npu1_/npu_/ipu_ before 2024, and aie4's for NPU3). The families below are
reviewed by hand, once, from the enums' groups: the status first (the firmware's own word on
what went wrong), then the request's when the status says nothing of where (an invalid
parameter, busy, a generic error).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

_DATA = Path(__file__).with_name("data") / "fw_messages.json"
# the driver's report of a refused message (aie2_message.c aie2_send_mgmt_msg_wait and
# aie2_config_cu, aie4_message.c aie4_send_msg_wait, aie.c aie_send_mgmt_msg_wait in-tree)
_ANSWER_RE = re.compile(
    r"(?i)\bcommand opcode (0x[0-9a-f]{1,8}) failed, status (0x[0-9a-f]{1,8})\b"
)
_PREFIX_RE = re.compile(r"^(?:AIE2|AIE4|NPU|IPU)_(?:MSG_)?(?:STATUS|OP)_|^MSG_OP_")

# what the firmware's status says, by its name without the generation's prefix; the
# family "" when it says nothing of where
STATUSES: dict[str, tuple[str, str]] = {
    "INVALID_COMMAND": ("versions", "it does not implement this request"),
    "NOTSUPP": ("versions", "it does not implement this request"),
    "MGMT_ERT_NOAVAIL": ("hwctx", "it has no resource free for it (columns, contexts)"),
    "MGMT_ERT_APPLICATION_ACTIVE": ("hwctx", "an application is still active on the NPU"),
    "ACTIVE_APP_ERROR": ("hwctx", "an application is still active on the NPU"),
    "PROPERTY_UPDATE_FAILED": ("hwctx", "updating the context's property failed"),
    "PDI_REG_FAILED": ("hwctx", "registering the PDI (the xclbin's partition) failed"),
    "PDI_UNREG_FAILED": ("hwctx", "unregistering the PDI failed"),
    "XCLBIN_REG_FAILED": ("hwctx", "registering the xclbin failed"),
    "XCLBIN_UNREG_FAILED": ("hwctx", "unregistering the xclbin failed"),
    "MGMT_ERT_SELF_TEST_FAILURE": ("firmware", "its self test failed"),
    "MGMT_ERT_HASH_MISMATCH": ("firmware", "its header hash does not match"),
    "MGMT_ERT_ENTER_SUSPEND_FAILURE": ("power", "it could not enter suspend"),
    "MGMT_ERT_DRAM_BUFFER_SIZE_INVALID": ("memory", "the host buffer's size is not one it takes"),
    "ASYNC_EVENT_MSGS_FULL": ("mailbox", "its queue of asynchronous event messages is full"),
    "APP_ERT_FIRST_ERROR": ("command", "the application's command failed on the NPU"),
    "APP_INVALID_INSTR": ("command", "an instruction of the command is invalid"),
    "APP_LOAD_PDI_FAIL": ("command", "loading the command's PDI failed"),
    "MGMT_ERT_BUSY": ("", "it is busy"),
    "MGMT_ERT_INVALID_PARAM": ("", "a parameter of the request is invalid"),
    "INVALID_PARAM": ("", "a parameter of the request is invalid"),
    "INVALID_INPUT_BUFFER": ("", "the request's input buffer is invalid"),
    "INVALID_OPERATION": ("", "the request is not valid in this state"),
    "DEBUG_BO_CONFIG_FAILED": ("", "configuring the debug buffer failed"),
    "ERROR": ("", "an error"),
}
# the AI Engine array's own errors (0x1000001...: saturation, DMA, lock, bus ...): the
# command running on it faulted
_AIE_ERROR = ("command", "the AI Engine array faulted while running it")

# the family of the request, by its name without the prefix, when the status names none
_REQUEST_FAMILIES = (
    (re.compile(r"CONTEXT|PARTITION|CONFIG(?:URE)?_CU|PDI|HOST_BUFFER|UPDATE_PROPERTY"), "hwctx"),
    (re.compile(r"EXEC|CHAIN_"), "command"),
    (re.compile(r"^(?:SUSPEND|RESUME|POWER_|CALIBRATE_)"), "power"),
    (re.compile(r"PASID"), "iommu"),
    (re.compile(r"VERSION|IDENTIFY"), "versions"),
    (re.compile(r"TRACE|FW_LOG|DEBUG_BO|LOGGING|COREDUMP"), "notes"),
    (re.compile(r"SYNC_BO|DRAM_WORK_BUFFER"), "memory"),
)


@dataclass(frozen=True, slots=True)
class Answer:
    request: str  # "MSG_OP_START_FW_TRACE (0x10f)", or the bare value when unknown
    status: str  # "AIE2_STATUS_INVALID_COMMAND (0x4000002)"
    meaning: str
    family: str  # "" when neither the status nor the request names one

    def describe(self) -> str:
        return f"The firmware answered {self.request} with {self.status}: {self.meaning}."


# generation -> "opcode" or "status" -> value ("0x10f") -> name -> {"first": date, "last": date}
_Tables = dict[str, dict[str, dict[str, dict[str, dict[str, str]]]]]


@functools.cache
def _tables() -> _Tables:
    document = json.loads(_DATA.read_text(encoding="utf-8"))
    tables: _Tables = document["generations"]
    return tables


def _latest(names: dict[str, dict[str, str]]) -> str:
    """The name a value had last (the header renamed NPU_ to AIE2_ in May 2024)."""
    return max(names, key=lambda name: (names[name]["last"], name))


def _short(name: str) -> str:
    return _PREFIX_RE.sub("", name)


def answer(line: str) -> Answer | None:
    """The firmware's answer the line reports, when its status is one the headers name."""
    match = _ANSWER_RE.search(line)
    if match is None:
        return None
    opcode, status = (f"0x{int(value, 16):x}" for value in match.groups())
    tables = _tables()
    generation = "aie4" if "aie4_" in line else "aie2"
    if opcode not in tables[generation]["opcode"] and opcode in tables["aie4"]["opcode"]:
        generation = "aie4"
    statuses = tables[generation]["status"]
    if status not in statuses:
        return None  # 0xffffffff: no answer the firmware gives (the mailbox read failed)
    status_name = _latest(statuses[status])
    request_names = tables[generation]["opcode"].get(opcode)
    request_name = _latest(request_names) if request_names else ""
    short = _short(status_name)
    family, meaning = _AIE_ERROR if short.startswith("AIE_") else STATUSES.get(short, ("", ""))
    if not family and request_name:
        family = next(
            (f for pattern, f in _REQUEST_FAMILIES if pattern.search(_short(request_name))), ""
        )
    request = f"{request_name} ({opcode})" if request_name else f"request {opcode}"
    return Answer(request, f"{status_name} ({status})", meaning or "an error", family)


def answer_family(line: str) -> str:
    """The family of the firmware's answer the line reports ("" when none)."""
    found = answer(line)
    return found.family if found is not None else ""
