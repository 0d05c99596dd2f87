"""scripts/gen_upstream_messages.py (run by hand on snapshots): its pure parts, and the data
file it wrote."""

from __future__ import annotations

import importlib.util
import json
import re
from types import ModuleType

from tests.conftest import REPO
from xdnaforge.diagnosis.upstream import DATA_FILE, catalogue, template_pattern


def generator() -> ModuleType:
    """scripts/message_extract.py: the extraction the generator runs on every file."""
    path = REPO / "scripts/message_extract.py"
    spec = importlib.util.spec_from_file_location("message_extract", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


C_SOURCE = r"""
static int aie2_init(struct amdxdna_dev *xdna)
{
    ret = request_firmware(&fw, ndev->priv->fw_path, &pdev->dev);
    if (ret) {
        XDNA_ERR(xdna, "failed to request_firmware %s, ret %d",
             ndev->priv->fw_path, ret);
        return ret;
    }
    XDNA_WARN(xdna, "Firmware %d.%d" " is old", major, minor);
    XDNA_DBG(xdna, "not kept: debug level");
}

int
device::open(int flags)
{
  if (fd < 0)
    shim_err(-errno, "%s IOCTL failed", name.c_str());
  throw std::runtime_error("Failed to open " + path + ": no access");
}
"""


def test_messages_calls_functions_and_levels_are_extracted() -> None:
    found = generator().extract(C_SOURCE)
    assert found == [
        ("error", "failed to request_firmware %s, ret %d", "aie2_init", True),
        ("warning", "Firmware %d.%d is old", "aie2_init", True),
        ("error", "%s IOCTL failed (err=%d)", "device::open", False),
        ("error", "Failed to open \x00: no access", "device::open", False),
    ]


def test_format_specifiers_become_patterns() -> None:
    pattern = re.compile(template_pattern("smu cmd %d failed, 0x%x (%s) 100%%"))
    assert pattern.fullmatch("smu cmd 4 failed, 0xff (power off) 100%")
    assert not pattern.fullmatch("smu cmd four failed, 0xff (power off) 100%")
    boost = re.compile(template_pattern("Test %1% of %s: %-22s"))
    assert boost.fullmatch("Test 1 of latency: PASSED")


def _render(template: str) -> str:
    samples = {"d": "-19", "i": "3", "u": "7", "x": "ff", "X": "FF", "s": "abc", "p": "0x1"}
    return re.sub(
        r"%(?:%|\d+%|[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t|L)?([a-zA-Z]))",
        lambda m: "%" if m.group(0) == "%%" else samples.get(m.group(1) or "s", "1"),
        template,
    )


def test_every_template_in_the_data_file_is_matched_by_its_own_pattern() -> None:
    misses = []
    for message in catalogue().messages:
        line = (f"{message.function}: " if message.component == "amdxdna" else "") + _render(
            message.template
        )
        if not message.pattern.search(line):
            misses.append(message.describe())
    assert misses == []


OTHER_SOURCES = r"""
void flm_check() {
  header_print("ERROR", "NPU firmware version on " << path << " is incompatible");
  header_print("INFO", "not kept: information");
  header_print_r("ERROR", "Unsupported model family or non-llm: " << info["details"]["family"]);
  header_print("Warning", "Version check timed out; continuing without update info.");
}
void pull() {
  header_print("FLM", "Model " + model_tag + " is not compatible with the current FLM version. ");
  header_print("FLM", "Downloading " + std::to_string(n) + " missing files...");
  header_print("FLM", "Fail!");
  header_print("Linux", "Warning: could not raise memlock limit to " << mb << " MB");
}
void serve() {
  LOG(ERROR, "Server") << "Failed to load model: " << e.what() << std::endl;
  xrt_core::message::send(xrt_core::message::severity_level::warning, "XRT",
                          "Kernel " + name + " has no compute units");
}
"""


def test_flm_lemonade_and_xrt_message_calls_are_extracted() -> None:
    found = generator().extract(OTHER_SOURCES)
    assert ("error", "NPU firmware version on \x00 is incompatible", "flm_check", False) in found
    # header_print_r and the "Error"/"Warning" spellings of later releases; a subscript's key
    # is part of the value printed, not text of the message
    assert ("error", "Unsupported model family or non-llm: \x00", "flm_check", False) in found
    timed_out = "Version check timed out; continuing without update info."
    assert ("warning", timed_out, "flm_check", False) in found
    # e.what() inside: the message passes a caught exception's text up ("\x01", a caller)
    assert ("error", "Failed to load model: \x01", "serve", False) in found
    assert ("warning", "Kernel \x00 has no compute units", "serve", False) in found
    assert all("not kept" not in template for _, template, _, _ in found)
    # FastFlowLM's own tags carry news and failures alike: a failure when its text says so
    # (and says enough to be told from any other program's "Fail!")
    pulled = [(level, template) for level, template, function, _ in found if function == "pull"]
    assert pulled == [
        ("error", "Model \x00 is not compatible with the current FLM version."),
        ("warning", "Warning: could not raise memlock limit to \x00 MB"),
    ]


def test_cmake_and_shell_failures_are_extracted() -> None:
    extract = generator().extract_any
    cmake = 'message(FATAL_ERROR "Boost ${BOOST_VER} not found, install libboost-dev")\n'
    assert extract("CMakeLists.txt", cmake) == [
        ("error", "Boost \x00 not found, install libboost-dev", "", False)
    ]
    shell = 'echo "Building package $PKG"\necho "ERROR: deb package $DEB not found"\n'
    assert extract("build/build.sh", shell) == [
        ("error", "ERROR: deb package \x00 not found", "", False)
    ]


# DKMS's shape (dkms.in): error functions of its own, a code before the text, bash's $"..."
DKMS_SCRIPT = r"""#!/bin/bash
error() (
    echo -n "Error! "
    for s in "$@"; do echo "$s"; done
)

die() {
    ret=$1
    shift
    error "$@"
}

actual_build()
{
    echo "Certificate or key are missing, generating self signed certificate for MOK..."
    if [[ $bad ]]; then
        report_build_problem 10 $"Bad return status for module build on kernel: $kver ($arch)" \
            "Consult $base_dir/build/make.log for more information."
    fi
    [[ -e $file ]] || report_build_problem 7 \
        "Build of $name failed for: $kernelver ($arch)"
    echo "Signing failed for module $name"
    warn $"The $1 script is not executable."
}

usage()
{
    echo "  [--force]   Do not fail when the module is missing from the tree"
}

die 4 $"Cannot specify more than one action."
die 2 $"$x does not exist."
"""


def test_a_scripts_own_error_functions_are_its_messages() -> None:
    found = generator().extract_any("dkms.in", DKMS_SCRIPT)  # a script by its #! line
    assert found == [
        (
            "error",
            "Bad return status for module build on kernel: \x00 (\x00)",
            "actual_build",
            False,
        ),
        ("error", "Build of \x00 failed for: \x00 (\x00)", "actual_build", False),
        # its other echoes are news, unless they say themselves that something failed
        ("error", "Signing failed for module \x00", "actual_build", False),
        ("warning", "The \x00 script is not executable.", "actual_build", False),
        # the top level: dkms's command line; a short template with a value in it is anyone's
        ("error", "Cannot specify more than one action.", "", False),
    ]


def test_a_scripts_help_text_is_not_a_message() -> None:
    help_text = 'usage() {\n  echo "  [-noert]  Do not treat missing ERT FW as a build error"\n}\n'
    assert generator().extract_any("build/build.sh", help_text) == []
    outside = 'echo "ERROR: deb package $DEB not found"\nusage() {\n  echo "x"\n}\n'
    assert generator().extract_any("build/build.sh", outside) == [
        ("error", "ERROR: deb package \x00 not found", "", False)
    ]


def test_aie_rts_log_macros_are_messages() -> None:
    source = (
        "static AieRC _XAie_LoadProgMemSection(XAie_DevInst *DevInst)\n{\n"
        '\tif (Size > Max) {\n\t\tXAIE_ERROR("Overflow of program memory\\n");\n\t}\n'
        '\tXAIE_WARN("Tile %d is not a core tile\\n", Row);\n}\n'
    )
    found = generator().extract(source)
    assert ("error", "Overflow of program memory", "_XAie_LoadProgMemSection", False) in found
    assert ("warning", "Tile %d is not a core tile", "_XAie_LoadProgMemSection", False) in found


def test_mlir_diagnostics_are_messages() -> None:
    # mlir-aie's passes: the format as the call's literal, then the "<<" chain to its ";"
    source = (
        "LogicalResult checkAndPrintOverflow(TileOp tile, int address) {\n"
        '  if (address > max) {\n    tile.emitOpError("allocated buffers exceeded available '
        'memory\\n");\n    return failure();\n  }\n}\n'
        "void setBufferAddress(BufferOp buffer, int size) {\n"
        '  buffer.emitError(loc, "Failed to allocate buffer: ") << buffer.name()\n'
        '      << " with size: " << size << " bytes.";\n'
        '  op.emitWarning() << "aie.add conversion is not implemented\\n";\n}\n'
    )
    found = generator().extract(source)
    assert (
        "error",
        "allocated buffers exceeded available memory",
        "checkAndPrintOverflow",
        False,
    ) in found
    assert (
        "error",
        "Failed to allocate buffer: \x00 with size: \x00 bytes.",
        "setBufferAddress",
        False,
    ) in found
    assert ("warning", "aie.add conversion is not implemented", "setBufferAddress", False) in found


def test_a_header_without_message_calls_is_read_in_bounded_time() -> None:
    # XRT 2.18's getopt.h made the function regex backtrack for minutes
    header = (
        'extern "C" {\n'
        + "extern char *optarg;\n" * 40
        + "int getopt(int argc, char *const argv[]);\n"
    )
    assert generator().extract(header) == []


def gen_script() -> ModuleType:
    path = REPO / "scripts/gen_upstream_messages.py"
    spec = importlib.util.spec_from_file_location("gen_upstream_messages", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_release_ranges_are_compacted_and_expanded_back() -> None:
    script = gen_script()
    assert script.compact([5, 0, 1, 2, 7, 8]) == "0-2,5,7-8"
    assert script.expand("0-2,5,7-8") == [0, 1, 2, 5, 7, 8]


def test_which_files_of_each_repository_are_read() -> None:
    script = gen_script()
    assert script._xrt_file("src/runtime_src/core/common/module_loader.cpp")
    assert script._xrt_file("build/build.sh")
    assert not script._xrt_file("src/runtime_src/core/tools/xbtracer/src/app/getopt.h")
    assert not script._xrt_file("src/runtime_src/core/edge/user/shim.cpp")
    assert script._flm_file("src/server/server.cpp")
    assert not script._flm_file("src/include/minja/minja.hpp")
    assert script._lemonade_file("src/cpp/server/backends/fastflowlm/fastflowlm_server.cpp")
    assert not script._lemonade_file("src/cpp/tray/tray_app.cpp")
    assert script._component("amd/xdna-driver", "drivers/accel/amdxdna/aie2_pci.c") == "amdxdna"
    assert script._component("Xilinx/XRT", "src/runtime_src/core/tools/xbutil2/x.cpp") == "xrt-smi"
    assert script._component("Xilinx/XRT", "build/build.sh") == "build"
    # xclbinutil, which the NPU toolchains run to package an xclbin (.cxx), not its tests
    assert script._xrt_file("src/runtime_src/tools/xclbinutil/XclBinClass.cxx")
    assert not script._xrt_file("src/runtime_src/tools/xclbinutil/unittests/TestUtil.cxx")
    assert script._component("Xilinx/XRT", "src/runtime_src/tools/xclbinutil/DTC.cxx") == (
        "xclbinutil"
    )
    # the Python Lemonade's NPU parts, not its CPU/GPU backends; GAIA's setup and LLM
    # clients, not its agents; mlir-aie's Python, not its table helpers
    assert script._lemonade_file("src/lemonade/tools/oga/load.py")
    assert not script._lemonade_file("src/lemonade/tools/llamacpp/load.py")
    assert script._gaia_file("src/gaia/installer/init_command.py")
    assert not script._gaia_file("src/gaia/agents/email/agent.py")
    assert not script._gaia_file("src/gaia/llm/providers/claude.py")
    assert script._mlir_aie_file("python/iron/worker.py")
    assert not script._mlir_aie_file("python/helpers/taplib/tap.py")
    # and its compiler's C++ (passes, targets, tools), not its tests
    assert script._mlir_aie_file("lib/Dialect/AIE/Transforms/AIEAssignBuffers.cpp")
    assert script._mlir_aie_file("tools/aiecc/aiecc.cpp")
    assert not script._mlir_aie_file("test/lit/unit.cpp")
    assert not script._mlir_aie_file("lib/Dialect/AIE/IR/AIEOps.td")
    assert script._component("amd/gaia", "src/gaia/llm/lemonade_client.py") == "gaia"
    # mlir-air's Python (aircc.py, the XRT backend), Riallto's npu package and its scripts
    assert script._mlir_air_file("python/air/compiler/aircc/main.py")
    assert not script._mlir_air_file("programming_examples/llms/run.py")
    assert script._riallto_file("npu/runtime/apprunner.py")
    assert script._riallto_file("npu/build/build_template/app_build.sh")
    assert not script._riallto_file("notebooks/3_1_Color_detection.ipynb")
    # a Python message of fewer than four words could be any program's
    assert not script._python_telling("An error occurred")
    assert not script._python_telling("Unsupported device: \x00")
    assert script._python_telling("Model \x00 is not compatible with FLM")
    # DKMS: its main script in both names, not its tests or man page
    assert script._dkms_file("dkms.in")
    assert script._dkms_file("dkms")
    assert not script._dkms_file("dkms.8.in")
    assert not script._dkms_file("test/dkms_test.sh")
    assert script._component("dkms-project/dkms", "dkms.in") == "dkms"
    # aie-rt's driver library, not its tests
    assert script._aie_rt_file("driver/src/core/xaie_elfloader.c")
    assert not script._aie_rt_file("driver/tests/xaie_test.c")
    assert script._component("Xilinx/aie-rt", "driver/src/core/xaie_elfloader.c") == "aie-rt"
    assert script._four_words("Overflow of program memory")
    assert not script._four_words("Feature not supported")


def test_a_reports_no_device_line_is_a_message() -> None:
    text = 'void ReportHost::writeReport()\n{\n  _output << "  0 devices found" << std::endl;\n}\n'
    assert generator().extract(text) == [
        ("error", "0 devices found", "ReportHost::writeReport", False)
    ]


def test_a_tools_error_streamed_through_boost_format_is_a_message() -> None:
    text = (
        "int SubCmdExamine::execute(const SubCmdOptions& options)\n{\n"
        '  std::cerr << boost::format("Error: The following report(s) require specifying a '
        'device using the --device option:\\n");\n'
        '  std::cerr << boost::format("ERROR: %s\\n") % e.what();\n'
        '  std::cout << "TEST FAILED!" << std::endl;\n}\n'
    )
    found = generator().extract(text)
    said = "Error: The following report(s) require specifying a device using the --device option:"
    # the tag alone ("ERROR: %s") prints another message, extracted where that is thrown
    assert found == [
        ("error", said, "SubCmdExamine::execute", False),
        ("error", "TEST FAILED!", "SubCmdExamine::execute", False),
    ]


def test_a_message_formatted_into_a_variable_and_thrown_is_a_message() -> None:
    # xclbinutil's and XRT's tools' form: the format named, then thrown by its name
    text = (
        "void XclBin::getKeyValueComponents(const std::string& _keyValue)\n{\n"
        "  if (tokens.size() != 3) {\n"
        '    auto errMsg = boost::format("ERROR: Expected format [USER | SYS]:<key>:<value> '
        'when using adding a key value pair.  Received: %s.") % _keyValue;\n'
        "    throw std::runtime_error(errMsg.str());\n  }\n"
        "  boost::format missing(\"ERROR: Unable to find the section: '%s'\");\n"
        "  missing % name;\n"
        "  throw XUtil::XclBinUtilException(xet_missing_section, boost::str(missing));\n"
        '  boost::format shown("Section: %s");\n'
        "  std::cout << shown;\n"  # printed, never thrown: not an error message
        '  auto again = boost::format("ERROR: first %s");\n'
        '  again = boost::format("Info: second %s");\n'  # another format before the throw
        "  throw std::runtime_error(again.str());\n}\n"
    )
    function = "XclBin::getKeyValueComponents"
    assert generator().extract(text) == [
        (
            "error",
            "ERROR: Expected format [USER | SYS]:<key>:<value> when using adding a key value "
            "pair.  Received: %s.",
            function,
            False,
        ),
        ("error", "ERROR: Unable to find the section: '%s'", function, False),
    ]


def test_the_written_catalogue_reads_back_as_the_messages_given() -> None:
    from xdnaforge.diagnosis.upstream import parse_catalogue

    sources = [{"repo": "Xilinx/XRT", "commit": "a1", "label": "2.19"}]
    given = [
        {
            "component": "xrt",
            "level": "error",
            "file": "core/common/module_loader.cpp",
            "function": "module_path",
            "template": 'No such library "%s"',
            "pattern": 'No such library ".*?"',
            "seen": "0",
            "family": "device-access",
            "caller": True,
        }
    ]
    text = gen_script().render(sources, given)
    # a message is one line, not one line per key, under its file's component and path
    lines = text.splitlines()
    assert lines[-4] == '["xrt", "core/common/module_loader.cpp", ['
    assert lines[-3].startswith('["error", "module_path", "No such library')
    [message] = parse_catalogue(text).messages
    assert (message.template, message.regex, message.family, message.caller) == (
        'No such library "%s"',
        'No such library ".*?"',
        "device-access",
        True,
    )


def test_the_data_file_keeps_a_regex_only_where_the_template_cannot_give_it_back() -> None:
    script = gen_script()
    prefixed = script.split_regex(
        "aie2_init", "Enable PASID failed, ret %d", r"aie2_init: Enable PASID failed, ret -?\d+"
    )
    assert prefixed == {"prefixed": 1, "pattern": ""}
    assert script.split_regex("", "Failed to open %s", "Failed to open .*?") == {
        "prefixed": 0,
        "pattern": "",
    }
    # "%%s" as shown: a literal "%" before a piece computed at run time, not "%" then "s"
    kept = script.split_regex("", "buffer length %%s", "buffer length %.*?")
    assert kept == {"prefixed": 0, "pattern": "buffer length %.*?"}
    assert script.row_regex({"function": "", "template": "buffer length %%s", **kept}) == (
        "buffer length %.*?"
    )
    # schema 3's rows carried the whole regex
    assert script.row_regex({"function": "f", "template": "x", "pattern": "f: x"}) == "f: x"


def test_the_data_file_stays_under_a_mebibyte() -> None:
    assert DATA_FILE.stat().st_size < 1 << 20


PYTHON_SOURCE = r"""
import logging, sys, warnings
log = logging.getLogger(__name__)

class Loader:
    def load(self, device):
        try:
            self.model = open_model(device)
        except Exception as e:
            log.error(f"Failed to load the model on {device}: {e}")
            raise ValueError(
                "Error initializing model: Invalid configuration detected.\n"
                "Please check the following:\n"
            ) from e
        if device not in ("npu", "hybrid"):
            raise NotImplementedError("Device %s is not supported by OGA" % device)
        self.error("an object's own method, not a logger")
        print("Loading the model on the NPU")
        print(f"ERROR: NPU driver {version} is older than {wanted}")
        warnings.warn("Version check timed out; continuing without it")

def main():
    sys.exit("Calls to lemonade are required to call at least one tool.")
    printing.log_error("Prompt tokens ({}) cannot be greater than {}".format(n, most))
"""


def test_python_raises_logs_and_prints_of_errors_are_extracted() -> None:
    extract = generator().extract_any
    found = extract("src/lemonade/tools/oga/load.py", PYTHON_SOURCE)
    assert found == [
        # the exception being handled, inside: a caller passing its callee's failure up
        ("error", "Failed to load the model on \x00: \x01", "Loader.load", False),
        # a message of several lines: a log line shows its first
        (
            "error",
            "Error initializing model: Invalid configuration detected.",
            "Loader.load",
            False,
        ),
        ("error", "Device \x00 is not supported by OGA", "Loader.load", False),
        ("error", "ERROR: NPU driver \x00 is older than \x00", "Loader.load", False),
        ("warning", "Version check timed out; continuing without it", "Loader.load", False),
        ("error", "Calls to lemonade are required to call at least one tool.", "main", False),
        ("error", "Prompt tokens (\x00) cannot be greater than \x00", "main", False),
    ]
    # a file this Python cannot parse (a release written for Python 2) gives nothing
    assert extract("src/old.py", 'print "Error: old"\n') == []


def test_a_print_to_stderr_before_a_failing_exit_is_an_error_whatever_its_words() -> None:
    source = (
        "import sys\n"
        "def run(target):\n"
        "    if bad:\n"
        '        print("Unexpected target " + target + ". Exiting...", file=sys.stderr)\n'
        "        exit(-3)\n"
        '    print("the compile took a while", file=sys.stderr)\n'
        "    sys.exit(0)\n"
        '    print("no xclbin was written for this design", file=sys.stderr)\n'
        "    raise SystemExit(2)\n"
        '    print("progress: 3 of 4 kernels", file=sys.stderr)\n'
        "    step()\n"
    )
    assert generator().extract_any("python/compiler/aiecc/main.py", source) == [
        ("error", "no xclbin was written for this design", "run", False),
        ("error", "Unexpected target \x00. Exiting...", "run", False),
    ]


def test_restamping_with_the_reviewed_table_writes_the_data_file_byte_for_byte() -> None:
    # --restamp: the families anew from the table, no snapshot; the table the file was
    # generated with gives it back unchanged
    text = DATA_FILE.read_text(encoding="utf-8")
    assert gen_script().restamp(text) == text


def test_restamping_gives_a_message_the_family_of_where_it_is_thrown_now() -> None:
    sources = [{"repo": "amd/xdna-driver", "commit": "a1", "label": "main"}]
    given = [
        {
            "component": "amdxdna",
            "level": "error",
            "file": "src/driver/amdxdna/aie2_pci.c",
            "function": "aie2_check_protocol",
            "template": "Incompatible firmware protocol major %d minor %d",
            "seen": "0",
            "family": "command",  # stamped by another table
        }
    ]
    script = gen_script()
    [(_, _, [row])] = json.loads(script.restamp(script.render(sources, given)))["messages"]
    assert row[-1] == "versions"  # FIELDS end with the family (no caller column here)
