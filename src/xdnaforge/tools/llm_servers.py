"""What FastFlowLM and Lemonade print when they work, read from their format strings, and
what a degenerate generation looks like. Pure parsers; nothing is run here.

- FastFlowLM serve (src/server/server.cpp, every tag to v0.9.2 and HEAD):
  `header_print("LOG", "WebServer started on port " << port << " with " << n << " I/O
  threads")`, and a generation's "Decoding speed:" (src/common/chat, `flm run` as well);
  the NPU request queue's "Dequeuing NPU request" of later releases; or a request that held
  the NPU and was answered: `header_print("🟢 ", "NPU Locked!")` when it takes the NPU
  (server.cpp at 8b8399c), the model's `header_print("FLM", "Model RAW Output: \n" +
  result)` (src/common/AutoModel/modeling_*.cpp) with words in it, then "NPU Lock Released!";
- Lemonade's `lemonade backends` table (src/cpp/cli/lemonade_client.cpp: columns Recipe,
  Backend, Status, Message/Version, Action): the `flm`/`npu` row and its status;
- Lemonade's telemetry (src/cpp/server/server.cpp, include/lemon/streaming_proxy.h):
  `LOG(INFO, "Telemetry") << "Inference completed: model=" ... ", tokens=" N " (in=" a ",
  out=" b ")" ...`, and the block `"=== Telemetry ===" ... "Output tokens: " N` that 9.0.2's
  server.cpp prints with std::cout and later releases at LOG(DEBUG) (its "Model:" line
  from 10.x on).

- Lemonade's model manager at start-up (src/cpp/server/model_manager.cpp, `LOG(INFO,
  "ModelManager") << "Backend availability:"` then `"  - NPU hardware: " << (npu_available
  ? "Yes" : "No")`; available means the NPU's PCI device and its driver were found,
  src/cpp/server/system_info.cpp `get_npu_device`);
- the status block of Lemonade's Python CLI after a model was loaded and prompted (v5.0.0's
  src/turnkeyml/sequence/sequence.py, src/lemonade/sequence.py from v8.0.0 to v9.1.4: the
  build's status "Successful build!", then the stats, "Device: npu" or "hybrid" and the
  model's "Response:");
- the status block of Lemonade's Python CLI (`lemonade ... bench`, v5.0.0 to v9.1.4:
  src/lemonade/common/status.py prints each stat under `_pretty_print_key(key)`, the keys
  of src/lemonade/cache.py's `Keys`): "Device: npu" (or "hybrid", NPU and iGPU) and "Token
  Generation Tokens Per Second: <t>";
- FastFlowLM's model download (src/pull/model_downloader.cpp, `pull_model`, every tag to
  v0.9.2 and HEAD): `header_print("FLM", "Model downloaded successfully!")`, then its own
  check of the files, "All files verified successfully." (or "Some files may be missing
  after download:" under a WARNING header);
- `flm validate --json`, as Lemonade reads it (src/cpp/server/backends/fastflowlm/
  fastflowlm_models.cpp, `run_flm_validate`, every tag from v9.4.1 to e385039e; its test
  test/test_flm_status.py prints the same object): one JSON object whose `ready` is the
  verdict and whose `amd_device_found`, `all_fw_ok`, `kernel_ok`, `memlock_ok` and
  `npu_driver_ok` say which check failed.

A generation whose output is one token repeated is degenerate: `degenerate()` finds it.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass

_SERVE_RE = re.compile(r"WebServer started on port (\d+)")
_NPU_REQUEST_RE = re.compile(r"Dequeuing NPU request|NPU busy, request queued")
_RAW_OUTPUT_RE = re.compile(r"Model RAW Output: *\n\s*(\S[^\n]*)")
_ANSWER_WORDS_RE = re.compile(r"\b[A-Za-z]{2,}\b")
_BACKEND_ROW_RE = re.compile(
    r"^(flm|\s{4,})\s+(npu)\s+(installed|update_available|update_required|unsupported|\w+)\b(?:\s+(\S+))?",
    re.M,
)
_BACKEND_HEADER_RE = re.compile(r"^Recipe\s+Backend\s+Status\s+Message/Version", re.M)
_TELEMETRY_RE = re.compile(
    r"Inference completed: model=(\S+?), tokens=(\d+) \(in=(\d+), out=(\d+)\)"
)
_TELEMETRY_BLOCK_RE = re.compile(
    r"=== Telemetry ===\s*\n(?:.*\n){0,3}?.*?\bOutput tokens: (\d+)", re.M
)
_BLOCK_MODEL_RE = re.compile(r"\bModel: +(\S+)")
_BENCH_DEVICE_RE = re.compile(r"^\s*Device:\s+(npu|hybrid)\s*$", re.M)
_BUILD_OK_RE = re.compile(r"^\s*Status:\s+Successful build!", re.M)
_RESPONSE_RE = re.compile(r"^\s*Response:\s+\S", re.M)
_BENCH_TPS_RE = re.compile(r"^\s*Token Generation Tokens Per Second:\s+([0-9.]+)\s*$", re.M)
_AVAILABLE_RE = re.compile(r"- NPU hardware: Yes\s*$", re.M)
_WORD_RE = re.compile(r"\S+")
# FastFlowLM's pull, its download then its own check of the files (model_downloader.cpp)
_PULLED_RE = re.compile(r"^\[FLM\]  Model downloaded successfully!\s*$", re.M)
_VERIFIED_RE = re.compile(r"^\[FLM\]  All files verified successfully\.\s*$", re.M)
# the object `flm validate --json` prints (one line; a pretty-printed one starts with "{")
_FLM_JSON_RE = re.compile(r'^\s*(\{[^{}]*"ready"\s*:[^{}]*\})', re.M)
FLM_CHECKS = ("amd_device_found", "all_fw_ok", "kernel_ok", "memlock_ok", "npu_driver_ok")
DEGENERATE_RUN = 12  # the same token this many times in a row in a model's answer
# a token of one letter that the model printed with no space between, right after a word's
# start ("TheGGGGGGGG...", a tokenizer's single-character piece decoded again and again);
# letters a-f are left out, since "0xffffffffffffffff" is a register, not an answer, and x
# and z, which people redact serials and keys with ("SN: XXXXXXXXXXXXXXXX")
GLUED_RUN = 16  # ... and of one letter, with nothing between
_GLUED_RE = re.compile(r"([A-Za-z])(?!\1)([g-wyG-WY])\2{" + str(GLUED_RUN - 1) + ",}")


@dataclass(frozen=True, slots=True)
class Backend:
    status: str  # installed, unsupported, ...
    version: str


def flm_serving(text: str) -> str | None:
    """ "FastFlowLM serving on port 52625 (NPU requests handled)" when the server started and
    answered through the NPU; None otherwise (a server that never served proves nothing)."""
    started = _SERVE_RE.search(text)
    if started is None:
        return None
    if _NPU_REQUEST_RE.search(text, started.end()):
        return f"FastFlowLM serving on port {started.group(1)} (NPU requests handled)"
    locked = text.find("NPU Locked!", started.end())
    released = text.rfind("NPU Lock Released!")
    if locked < 0 or released < locked:
        return None
    for answer in _RAW_OUTPUT_RE.finditer(text, locked, released):
        if len(_ANSWER_WORDS_RE.findall(answer.group(1))) >= 3:
            port = started.group(1)
            return f"FastFlowLM serving on port {port} (a request answered on the NPU)"
    return None


def flm_pulled(text: str) -> str | None:
    """ "FastFlowLM downloaded a model and verified its files" when `flm pull` (or the pull
    before `flm run`) said both; None otherwise (a download it did not verify may be short)."""
    done = _PULLED_RE.search(text)
    if done is None or _VERIFIED_RE.search(text, done.end()) is None:
        return None
    return "FastFlowLM downloaded a model and verified its files (Model downloaded successfully!)"


def lemonade_flm_backend(text: str) -> Backend | None:
    """The FastFlowLM NPU row of a `lemonade backends` table, when the table is there."""
    if not _BACKEND_HEADER_RE.search(text):
        return None
    for match in _BACKEND_ROW_RE.finditer(text):
        if match.group(1) == "flm":
            return Backend(match.group(3), match.group(4) or "")
    return None


def lemonade_npu_available(text: str) -> str | None:
    """ "Lemonade found the NPU and its driver" when its model manager's start-up report says
    the NPU hardware is available."""
    if "Backend availability:" in text and _AVAILABLE_RE.search(text):
        return "Lemonade found the NPU and its driver (Backend availability: NPU hardware: Yes)"
    return None


def lemonade_inferences(text: str) -> list[tuple[str, int]]:
    """(model, output tokens) of each inference Lemonade's telemetry reports (the model is
    "" where the block does not name it)."""
    found = [(m.group(1), int(m.group(4))) for m in _TELEMETRY_RE.finditer(text)]
    if found:
        return found
    blocks = []
    for block in _TELEMETRY_BLOCK_RE.finditer(text):
        model = _BLOCK_MODEL_RE.search(block.group(0))
        blocks.append((model.group(1) if model else "", int(block.group(1))))
    return blocks


def lemonade_prompted(text: str) -> str | None:
    """The device of a Lemonade CLI status block whose build succeeded and whose model
    answered (`oga-load --device npu|hybrid ... llm-prompt`: "Status: Successful build!",
    sequence.py, and the "Response:" stat), or None."""
    built = _BUILD_OK_RE.search(text)
    device = _BENCH_DEVICE_RE.search(text, built.end()) if built else None
    if device is None or not _RESPONSE_RE.search(text, device.end()):
        return None
    return device.group(1)


def lemonade_bench(text: str) -> tuple[str, float] | None:
    """(device, tokens per second) of a Lemonade CLI status block that ran on the NPU."""
    device = _BENCH_DEVICE_RE.search(text)
    speed = _BENCH_TPS_RE.search(text, device.end()) if device else None
    if device is None or speed is None:
        return None
    try:
        tps = float(speed.group(1))
    except ValueError:
        return None
    return (device.group(1), tps) if tps > 0 else None


def flm_validate_json(text: str) -> dict[str, bool] | None:
    """The checks of `flm validate --json` (`ready` and those of FLM_CHECKS it printed), or
    None when the log has no such object."""
    match = _FLM_JSON_RE.search(text)
    if match is None:
        return None
    try:
        data = json.loads(match.group(1))
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("ready"), bool):
        return None
    return {
        key: value
        for key, value in data.items()
        if key in ("ready", *FLM_CHECKS) and isinstance(value, bool)
    }


def degenerate(text: str, run: int = DEGENERATE_RUN) -> str | None:
    """The first line in which one token repeats `run` times in a row ("the the the ..."),
    or one letter GLUED_RUN times with nothing between ("TheGGGG..."), as a model
    stuck in a loop prints it; None when there is none. A token of punctuation only is a
    ruler or a table's border, not words."""
    for line in text.splitlines():
        if _GLUED_RE.search(line):
            return line.strip()
        words = _WORD_RE.findall(line)
        if len(words) < run:
            continue
        count = 1
        for before, word in itertools.pairwise(words):
            count = count + 1 if word == before else 1
            if count >= run and any(c.isalnum() for c in word):  # not a ruler ("- - - -")
                return line.strip()
    return None
