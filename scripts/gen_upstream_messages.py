#!/usr/bin/env python3
"""Extract the error- and warning-level message templates of the NPU stack from upstream
snapshots and write src/xdnaforge/diagnosis/data/upstream_messages.json.

Run by hand (never at run time, never by a test) against fetched git snapshots:

    python3 scripts/gen_upstream_messages.py \
        --xdna /work/.mirror/amd+xdna-driver/repo --xrt /work/.mirror/Xilinx+XRT/repo \
        --flm /work/.mirror/ROCm+FastFlowLM/repo \
        --lemonade /work/.mirror/lemonade-sdk+lemonade/repo \
        --iree /work/.mirror/nod-ai+iree-amd-aie/repo \
        --dkms /work/.mirror/dkms-project+dkms/repo \
        --aie-rt /work/.mirror/Xilinx+aie-rt/repo \
        --gaia /work/.mirror/amd+gaia/repo \
        --mlir-aie /work/.mirror/*+mlir-aie/repo \
        --mlir-air /work/.mirror/*+mlir-air*/repo \
        --riallto /work/.mirror/AMDResearch+Riallto/repo [--linux-excerpts DIR]

Xilinx/mlir-aie is too large to fetch: --mlir-aie takes snapshots of forks, and each one
whose main branch is at an upstream commit (a merged pull request) stands for upstream at
that date ("main 2025-08-08"); the others are left out. --mlir-air does the same with
mlir-air's snapshot and its forks (mlir-air has no release tags).

Every release tag and release branch a snapshot holds is read (plus the commits the recipes
pin), through `git ls-tree` and one `git cat-file --batch` per snapshot; a file's text is
read once per blob, whatever the number of releases sharing it. What is kept per message:
component, level, the template as printed, its regex, file, function, the family
(`diagnosis/source_families.py`: the reviewed table from where a message is thrown to its
family) and the releases that print it (indices into `sources`). No code is kept.

--restamp reads no snapshot: after a review of the family table, it gives every message of
the existing data file the family the table now gives it (from its repository, file,
function and template, as a run from the snapshots would) and writes the file again; with
an unchanged table it writes the file byte for byte.

--linux-excerpts reads *.c files named after drivers/accel/amdxdna/ files of the in-tree
driver (Linux is too large to fetch here): each holds the lines of one upstream file that
carry function headers and message calls, first line `// commit <sha>`. Without it the
in-tree templates of the existing data file are carried over with their sources.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from message_extract import _telling, extract_any

from xdnaforge.diagnosis.source_families import family_of, rule_for
from xdnaforge.diagnosis.upstream import FIELDS, regex_of, rows, template_pattern

# the xdna-driver commits the recipes pin (recipes/*.yaml)
XDNA_PINS = {
    "49c590dc74fe5779bf613e357ed0a57efba0b4df": "1.4 (ryzen-ai-ubuntu24)",
    "f0b7bd5fbc9d45892d050cb55701541350390b99": "1.6 (ubuntu26-compat)",
    "beb9e450fe123ecdf395453971576179cedcf1dd": "2.21.75 (xdna-2.21.75)",
    "ca5bce25951b1f8e4c01405d7ff1a033d5e8fd81": "main (upstream-main)",
}
XRT_PINS = {
    "021204355eeaa034ff69aae407ace2265adf047a": "2.20 (ubuntu26-compat)",
    "4eb1f4392a012b4e6eca759762389c612537f7c7": "2.21.75 (xdna-2.21.75)",
    "b4bbf24c54b355b585d59f15264aba47d9aa54b9": "2.26 line (upstream-main)",
}
SOURCE_SUFFIXES = (".c", ".cpp", ".h", ".hpp", ".cmake", "CMakeLists.txt", ".sh")


def _xdna_file(path: str) -> bool:
    return path.endswith(SOURCE_SUFFIXES) and not path.startswith(("test/", "xrt/", "src/vxdna/"))


def _xrt_file(path: str) -> bool:
    if path.startswith("build/") or path.startswith("src/runtime_src/tools/scripts/"):
        return path.endswith(".sh")
    if path.startswith(("src/CMake/", "CMakeLists.txt", "src/CMakeLists.txt")):
        return path.endswith((".cmake", "CMakeLists.txt"))
    core = (
        "src/runtime_src/core/common/",
        "src/runtime_src/core/tools/",
        "src/runtime_src/core/pcie/linux/",
        "src/runtime_src/core/pcie/common/",
        "src/runtime_src/core/include/",
    )
    left_out = (
        "/core/tools/xbreplay/",  # API capture and replay
        "/core/tools/xbtracer/",
        # xbmgmt and xbflash manage and flash Alveo cards, never an NPU; their generic
        # phrases ("Failed to read %s") would place other programs' lines as firmware
        "/core/tools/xbmgmt2/",
        "/core/tools/xbflash2/",
    )
    if path.startswith("src/runtime_src/tools/xclbinutil/"):
        # xclbinutil packages the xclbins that the NPU toolchains build (aiecc.py runs it);
        # its sources are .cxx
        return "/unittests/" not in path and path.endswith((".cxx", ".h"))
    return (
        path.startswith(core)
        and not any(part in path for part in left_out)
        and path.endswith((".c", ".cpp", ".h", ".hpp"))
    )


def _flm_file(path: str) -> bool:
    vendored = ("nlohmann", "minja")  # JSON and template libraries FastFlowLM carries
    return (
        path.startswith("src/")
        and not any(name in path for name in vendored)
        and path.endswith((".cpp", ".hpp", ".h"))
    )


# the Python Lemonade's parts that run or set up the NPU (Ryzen AI's OGA, FastFlowLM, the
# server), its command line and installer; not its CPU/GPU backends (llama.cpp, Hugging
# Face), accuracy tools, reports or profilers
LEMONADE_PYTHON = (
    "src/lemonade/cli.py",
    "src/lemonade/api.py",
    "src/lemonade/common/",
    "src/lemonade/tools/oga/",
    "src/lemonade/tools/ort_genai/",
    "src/lemonade/tools/flm/",
    "src/lemonade/tools/server/",
    "src/lemonade_server/",
    "src/lemonade_install/",
)


def _lemonade_file(path: str) -> bool:
    """The NPU backends of Lemonade's C++ server and its backend manager (9.0 on), and the
    Python Lemonade before it (to 9.1): its CLI, tools, server and installer."""
    if path.endswith(".py"):
        return path.startswith(LEMONADE_PYTHON)
    npu = ("src/cpp/server/backends/fastflowlm/", "src/cpp/server/backends/ryzenai/")
    manager = path.startswith("src/cpp/server/") and "backend" in path.rsplit("/", 1)[-1]
    return (path.startswith(npu) or manager) and path.endswith((".cpp", ".h", ".hpp"))


# GAIA (amd/gaia) runs its LLMs through Lemonade on the NPU: its setup (`gaia init`, the
# installer's checks of Lemonade and the NPU driver) and its LLM clients; not its agents,
# apps, evaluations or UI, nor its command line (cli.py: every agent's commands)
GAIA_PATHS = (
    "src/gaia/device.py",
    "src/gaia/util.py",
    "src/gaia/version.py",
    "src/gaia/installer/",
    "src/gaia/llm/",
    "src/gaia/interface/",
)


def _gaia_file(path: str) -> bool:
    other_providers = ("/providers/claude", "/providers/openai", "/providers/litellm")
    return (
        path.endswith(".py")
        and path.startswith(GAIA_PATHS)
        and not any(part in path for part in other_providers)
    )


def _mlir_aie_file(path: str) -> bool:
    """mlir-aie's Python: IRON, aiecc.py (python/compiler), the compile and host-runtime
    utilities, not its table helpers or lit utilities; and its compiler's C++: the dialects'
    passes and targets (lib/) and the tools (tools/: aie-opt, aie-translate, the C++
    aiecc), whose MLIR diagnostics a design's build prints."""
    left_out = ("python/helpers/taplib/", "python/aie_lit_utils/", "/test")
    if any(part in path for part in left_out):
        return False
    if path.startswith(("lib/", "tools/")):
        return path.endswith(".cpp")
    return path.startswith("python/") and path.endswith(".py")


def _mlir_air_file(path: str) -> bool:
    """mlir-air's Python: aircc.py (python/air/compiler), its backends (XRT), its API."""
    return path.startswith("python/air/") and path.endswith(".py") and "/test" not in path


def _riallto_file(path: str) -> bool:
    """Riallto's npu package: its application builder (and the build scripts it runs), its
    runtime on the NPU, its kernels and utilities; not its notebooks or tests."""
    return path.startswith("npu/") and path.endswith((".py", ".sh"))


def _python_telling(template: str) -> bool:
    """Python's messages are often short and general ("An error occurred", "Unsupported
    device: {value}"): one of fewer than four words could be any program's."""
    return _telling(template.replace("\x01", "\x00")) and _four_words(template)


def _iree_file(path: str) -> bool:
    """iree-amd-aie's HAL drivers for the NPU (amdxdna, xrt), not their tests."""
    return (
        path.startswith("runtime/src/iree-amd-aie/driver/")
        and path.endswith((".c", ".cc", ".cpp", ".h"))
        and "_test." not in path
    )


# DKMS builds and installs the out-of-tree drivers (amdxdna-dkms, XRT's xocl/zocl): its main
# script (dkms, dkms.in from 3.0) and the helpers a package's postinst and the kernel's
# hooks run
DKMS_FILES = ("dkms", "dkms.in", "dkms_common.postinst", "dkms_common.postinst.in")


def _dkms_file(path: str) -> bool:
    return path in DKMS_FILES


def _four_words(template: str) -> bool:
    """aie-rt's messages are short ("Invalid Arguments", "Feature not supported"): one of
    fewer than four words could be any program's, so it would place other lines."""
    return len(re.findall(r"[A-Za-z][A-Za-z0-9_]*", template.replace("\x00", " "))) >= 4


def _aie_rt_file(path: str) -> bool:
    """aie-rt's driver library, which the NPU compilers run on the host to write a design's
    CDO and transactions (aiecc.py, iree-amd-aie); not its tests or examples."""
    return path.startswith("driver/src/") and path.endswith((".c", ".h"))


def _component(repo: str, path: str) -> str:
    if repo == "dkms-project/dkms":
        return "dkms"
    if repo == "Xilinx/aie-rt":
        return "aie-rt"
    if path.endswith((".sh", ".cmake", "CMakeLists.txt")):
        return "build"
    if repo == "torvalds/linux":
        return "amdxdna"
    if repo == "amd/xdna-driver":
        if "/amdxdna/" in path:
            return "amdxdna"
        return "example" if path.startswith("example/") else "shim"
    if repo == "Xilinx/XRT":
        if "/tools/xclbinutil/" in path:
            return "xclbinutil"
        return "xrt-smi" if "/core/tools/" in path else "xrt"
    return {
        "ROCm/FastFlowLM": "flm",
        "lemonade-sdk/lemonade": "lemonade",
        "nod-ai/iree-amd-aie": "iree",
        "amd/gaia": "gaia",
        "Xilinx/mlir-aie": "mlir-aie",
        "Xilinx/mlir-air": "mlir-air",
        "AMDResearch/Riallto": "riallto",
    }[repo]


class Snapshot:
    """One bare git snapshot: refs, tree listings and blobs (one cat-file --batch)."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._batch = subprocess.Popen(
            ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), *args], capture_output=True, check=True
        )
        return done.stdout.decode("utf-8", "replace")

    def rev(self, name: str) -> str | None:
        try:
            return self.git("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}").strip()
        except subprocess.CalledProcessError:
            return None

    def blobs(self, commit: str, wanted: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
        for line in self.git("ls-tree", "-r", commit).splitlines():
            meta, _, path = line.partition("\t")
            kind, sha = meta.split()[1:3]
            if kind == "blob" and wanted(path):
                yield path, sha

    def read(self, sha: str) -> str:
        assert self._batch.stdin is not None
        assert self._batch.stdout is not None
        self._batch.stdin.write(sha.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            return ""
        data = self._batch.stdout.read(int(header[2]) + 1)[:-1]
        return data.decode("utf-8", "replace")


def release_refs(snap: Snapshot, repo: str) -> list[tuple[str, str]]:
    """(ref, label) of every release tag and release branch, oldest first."""
    tags = snap.git("tag", "--sort=creatordate").split()
    branches = [
        b.strip().removeprefix("* ").removeprefix("origin/")
        for b in snap.git("branch", "--format=%(refname:short)").splitlines()
    ]
    if repo == "Xilinx/XRT":  # 2.17 (202410) on: xrt-smi and the NPU; older releases: xbutil
        refs = [t for t in tags if re.fullmatch(r"20\d{4}\.2\.\d+\.\d+|2\.\d+\.\d+", t)]
        refs += [b for b in branches if re.fullmatch(r"20(?:2[4-9])\.\d", b)]
    elif repo == "amd/xdna-driver":
        refs = tags + [b for b in branches if re.fullmatch(r"\d+\.\d+|main", b)]
    elif repo == "ROCm/FastFlowLM":
        refs = [*tags, "HEAD"]
    elif repo == "nod-ai/iree-amd-aie":  # no release tags: its main branch
        return [("HEAD", "main")]
    elif repo == "Xilinx/aie-rt":  # its release branches (the snapshot's tags are older)
        refs = [
            b
            for b in branches
            if re.fullmatch(r"xlnx_rel_v20\d\d\.\d|release/main_aig|main-aie", b)
        ]
    elif repo == "dkms-project/dkms":  # 2.8 (Ubuntu 20.04, Debian 11) on
        refs = [
            t
            for t in tags
            if (m := re.fullmatch(r"v(\d+)\.(\d+)(?:\.\d+)*", t))
            and (int(m.group(1)), int(m.group(2))) >= (2, 8)
        ]
    elif repo == "AMDResearch/Riallto":  # its release tags and branch, and main
        refs = [*tags, *(b for b in branches if re.fullmatch(r"v\d+(?:\.\d+)+|main", b))]
    elif repo == "amd/gaia":  # its releases, not its agent packages' tags
        refs = [t for t in tags if re.fullmatch(r"v\d+\.\d+\.\d+(?:\.\d+)?", t)]
    else:  # lemonade: the Python releases (5.0 on: Ryzen AI's OGA) and the C++ server's
        refs = [
            t
            for t in tags
            if re.fullmatch(r"v?\d+\.\d+\.\d+", t) and int(t.lstrip("v").split(".")[0]) >= 5
        ]
    return [(ref, ref) for ref in refs]


def collect(
    table: dict[tuple[str, str, str, str], dict[str, object]],
    repo: str,
    path: str,
    source: int,
    found: list[tuple[str, str, str, bool]],
) -> None:
    component = _component(repo, path)
    for level, marked, function, prefixed in found:
        # "\x01": a caught exception's text (e.what()) printed inside: a caller's message
        template = marked.replace("\x01", "\x00")
        key = (component, path, function, template)
        entry = table.get(key)
        if entry is None:
            shown = template.replace("\x00", "%s")
            entry = table[key] = {
                "component": component,
                "level": level,
                "file": path,
                "function": function,
                "template": shown,
                **split_regex(
                    function,
                    shown,
                    (re.escape(function) + ": " if prefixed and function else "")
                    + template_pattern(template),
                ),
                "family": family_of(repo, path, function, shown),
                "seen": [],
            }
            rule = rule_for(repo, path, function, shown)
            if "\x01" in marked or (rule is not None and rule.caller):
                entry["caller"] = True
        seen = entry["seen"]
        assert isinstance(seen, list)
        if source not in seen:
            seen.append(source)


def read_repo(
    table: dict[tuple[str, str, str, str], dict[str, object]],
    sources: list[dict[str, str]],
    repo: str,
    git_dir: Path,
    pins: dict[str, str],
    wanted: Callable[[str], bool],
    keep: Callable[[str], bool] = bool,
    refs: list[tuple[str, str]] | None = None,
) -> None:
    snap = Snapshot(git_dir)
    extracted: dict[tuple[str, str], list[tuple[str, str, str, bool]]] = {}  # read once
    refs = (release_refs(snap, repo) if refs is None else refs) + list(pins.items())
    done: set[str] = set()
    for ref, label in refs:
        sha = snap.rev(ref)
        if sha is None or sha in done:
            continue
        done.add(sha)
        index = len(sources)
        sources.append({"repo": repo, "commit": sha, "label": label})
        for path, blob in snap.blobs(sha, wanted):
            kind = (blob, path.rsplit(".", 1)[-1])
            if kind not in extracted:
                found = extract_any(path, snap.read(blob))
                if path.endswith(".py"):  # and every Python message says enough of its own
                    found = [item for item in found if _python_telling(item[1])]
                extracted[kind] = [item for item in found if keep(item[1])]
            collect(table, repo, path, index, extracted[kind])


def compact(indices: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2,5"."""
    runs: list[list[int]] = []
    for index in sorted(indices):
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def restamp(text: str) -> str:
    """The data file `text`, each message stamped with the family the table gives it now
    (the repository is that of the first release that prints it, as `collect` had it). A
    caller mark is only added (a rule's `caller`), never taken off: it also comes from the
    source's text (a caught exception's message printed inside), which the file does not
    keep; a rule that stops marking a caller needs a full run."""
    data = json.loads(text)
    sources = data["sources"]
    messages = []
    for item in rows(data):
        repo = sources[expand(item["seen"])[0]]["repo"]
        item["family"] = family_of(repo, item["file"], item["function"], item["template"])
        rule = rule_for(repo, item["file"], item["function"], item["template"])
        if rule is not None and rule.caller:
            item["caller"] = True
        messages.append(item)
    return render(sources, messages)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restamp", action="store_true", help="the families anew, no snapshot")
    parser.add_argument("--xdna", type=Path)
    parser.add_argument("--xrt", type=Path)
    parser.add_argument("--flm", type=Path)
    parser.add_argument("--lemonade", type=Path)
    parser.add_argument("--iree", type=Path)
    parser.add_argument("--dkms", type=Path)
    parser.add_argument("--aie-rt", type=Path)
    parser.add_argument("--gaia", type=Path)
    parser.add_argument(
        "--mlir-aie",
        type=Path,
        nargs="+",
        default=[],
        help="snapshots whose main branch is at an upstream commit of Xilinx/mlir-aie "
        "(forks: the upstream is too large to fetch); each one's HEAD is a source",
    )
    parser.add_argument(
        "--mlir-air",
        type=Path,
        nargs="+",
        default=[],
        help="snapshots of Xilinx/mlir-air and its forks; each HEAD at an upstream commit "
        "is a source",
    )
    parser.add_argument("--riallto", type=Path)
    parser.add_argument("--linux-excerpts", type=Path)
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent.parent
        / "src/xdnaforge/diagnosis/data/upstream_messages.json",
    )
    options = parser.parse_args()
    if options.restamp:
        options.output.write_text(restamp(options.output.read_text()))
        print(f"families restamped from the table -> {options.output}")
        return 0
    if options.xdna is None or options.xrt is None:
        parser.error("--xdna and --xrt are required (or --restamp)")
    table: dict[tuple[str, str, str, str], dict[str, object]] = {}
    sources: list[dict[str, str]] = []
    read_repo(table, sources, "amd/xdna-driver", options.xdna, XDNA_PINS, _xdna_file)
    read_repo(table, sources, "Xilinx/XRT", options.xrt, XRT_PINS, _xrt_file)
    if options.flm:
        read_repo(table, sources, "ROCm/FastFlowLM", options.flm, {}, _flm_file)
    if options.lemonade:
        read_repo(table, sources, "lemonade-sdk/lemonade", options.lemonade, {}, _lemonade_file)
    if options.iree:
        read_repo(table, sources, "nod-ai/iree-amd-aie", options.iree, {}, _iree_file)
    if options.dkms:
        read_repo(table, sources, "dkms-project/dkms", options.dkms, {}, _dkms_file)
    if options.aie_rt:
        read_repo(table, sources, "Xilinx/aie-rt", options.aie_rt, {}, _aie_rt_file, _four_words)
    if options.gaia:
        read_repo(table, sources, "amd/gaia", options.gaia, {}, _gaia_file)
    for date, git_dir in upstream_mains(options.mlir_aie):
        refs = [("HEAD", f"main {date}")]
        read_repo(table, sources, "Xilinx/mlir-aie", git_dir, {}, _mlir_aie_file, refs=refs)
    for date, git_dir in upstream_mains(options.mlir_air):
        refs = [("HEAD", f"main {date}")]
        read_repo(table, sources, "Xilinx/mlir-air", git_dir, {}, _mlir_air_file, refs=refs)
    if options.riallto:
        read_repo(table, sources, "AMDResearch/Riallto", options.riallto, {}, _riallto_file)
    if options.linux_excerpts:
        for excerpt in sorted(options.linux_excerpts.glob("*.c")):
            text = excerpt.read_text()
            sha = text.splitlines()[0].split()[-1]
            path = f"drivers/accel/amdxdna/{excerpt.name}"
            sources.append({"repo": "torvalds/linux", "commit": sha, "label": f"in-tree {path}"})
            collect(table, "torvalds/linux", path, len(sources) - 1, extract_any(path, text))
    elif options.output.exists():  # carry the in-tree templates over
        old = json.loads(options.output.read_text())
        old_sources = old["sources"]
        for item in rows(old):
            commits = item.get("commits") or [
                old_sources[i]["commit"] for i in expand(item.get("seen", ""))
            ]
            linux = [c for c in commits if _source_of(old_sources, c)["repo"] == "torvalds/linux"]
            for commit in linux:
                given = _source_of(old_sources, commit)
                if given not in sources:
                    sources.append(dict(given))
                key = ("amdxdna", item["file"], item["function"], item["template"])
                entry = table.setdefault(
                    key,
                    {
                        **{
                            k: item[k]
                            for k in ("component", "level", "file", "function", "template")
                        },
                        **split_regex(
                            item["function"],
                            item["template"],
                            row_regex(item),
                        ),
                        "family": family_of(
                            "torvalds/linux", item["file"], item["function"], item["template"]
                        ),
                        "seen": [],
                    },
                )
                rule = rule_for("torvalds/linux", item["file"], item["function"], item["template"])
                if rule is not None and rule.caller:
                    entry["caller"] = True
                seen = entry["seen"]
                assert isinstance(seen, list)
                seen.append(sources.index(given))
    messages = sorted(
        table.values(), key=lambda m: (str(m["component"]), str(m["file"]), str(m["template"]))
    )
    for message in messages:
        seen = message["seen"]
        assert isinstance(seen, list)
        message["seen"] = compact(seen)
    options.output.write_text(render(sources, messages))
    print(f"{len(messages)} message templates from {len(sources)} sources -> {options.output}")
    return 0


def upstream_mains(git_dirs: list[Path]) -> list[tuple[str, Path]]:
    """(date, snapshot) of each snapshot whose HEAD is an upstream commit (a merged pull
    request's "... (#1234)"), oldest first, one per commit: mlir-aie's and mlir-air's
    forks stand for their upstream at that date."""
    found: dict[str, tuple[str, Path]] = {}
    for git_dir in git_dirs:
        done = subprocess.run(
            ["git", "--git-dir", str(git_dir), "log", "-1", "--format=%H%x00%cs%x00%s"],
            capture_output=True,
            check=True,
            text=True,
        )
        sha, date, subject = done.stdout.strip().split("\x00")
        if re.search(r"\(#\d+\)$", subject):
            found.setdefault(sha, (date, git_dir))
    return sorted(found.values())


def split_regex(function: str, template: str, regex: str) -> dict[str, object]:
    """A message's regex as schema 4 keeps it: "prefixed" (1 when it begins with the driver's
    "<function>: "), and "pattern" only where `regex_of` does not give it back from the
    template as shown ("%%s": a literal "%" before a piece computed at run time)."""
    prefixed = int(bool(function) and regex.startswith(re.escape(function) + ": "))
    derived = regex_of(function, template, bool(prefixed))
    return {"prefixed": prefixed, "pattern": "" if regex == derived else regex}


def row_regex(item: dict[str, object]) -> str:
    """The regex of a row of the data file, whatever its schema."""
    if "prefixed" in item:
        prefixed, override = bool(item["prefixed"]), str(item.get("pattern") or "")
        return override or regex_of(str(item["function"]), str(item["template"]), prefixed)
    return str(item["pattern"])


def render(sources: list[dict[str, str]], messages: list[dict[str, object]]) -> str:
    """Schema 5: the messages of each file (in `messages`' order) under its component and
    path, each a row of FIELDS (plus `true` for a caller) on a line of its own."""
    head = {
        "schema": 5,
        "generated_by": "scripts/gen_upstream_messages.py",
        "families_from": "src/xdnaforge/diagnosis/data/source_families.yaml",
        "fields": list(FIELDS),
        "sources": sources,
    }
    groups: list[str] = []
    lines: list[str] = []
    place: tuple[object, object] | None = None
    for message in messages:
        if (message["component"], message["file"]) != place:
            if lines:
                groups.append(",\n".join(lines) + "\n]]")
            place = (message["component"], message["file"])
            lines = []
            groups_head = json.dumps(list(place), ensure_ascii=False)[:-1] + ", ["
        row = [message.get(name, "") for name in FIELDS]
        if message.get("caller"):
            row.append(True)
        if not lines:
            lines.append(groups_head + "\n" + json.dumps(row, ensure_ascii=False))
        else:
            lines.append(json.dumps(row, ensure_ascii=False))
    if lines:
        groups.append(",\n".join(lines) + "\n]]")
    text = json.dumps(head, indent=0, sort_keys=True)
    return text[:-2] + ',\n"messages": [\n' + ",\n".join(groups) + "\n]}\n"


def expand(seen: str) -> list[int]:
    """ "0-2,5" -> [0, 1, 2, 5]."""
    found: list[int] = []
    for part in filter(None, seen.split(",")):
        first, _, last = part.partition("-")
        found.extend(range(int(first), int(last or first) + 1))
    return found


def _source_of(sources: list[dict[str, str]], commit: str) -> dict[str, str]:
    return next(s for s in sources if s["commit"] == commit)


if __name__ == "__main__":
    sys.exit(main())
