"""Maintainer scripts are known only when they are exactly a generator's output for the package."""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch

import pytest

from tests.conftest import REPO
from xdnaforge.debs import generators
from xdnaforge.debs.generators import ScriptMatch, match

# Debian forky's python3-xrt 1:2.25.0-4+b1 (amd64) and libxrt2, as dpkg-deb -e extracts them
FORKY_POSTINST = (
    "#!/bin/sh\n"
    "set -e\n"
    "\n"
    "# Automatically added by dh_python3\n"
    "if command -v py3compile >/dev/null 2>&1; then\n"
    "\tpy3compile -p python3-xrt:amd64  || true\n"
    "fi\n"
    "if command -v pypy3compile >/dev/null 2>&1; then\n"
    "\tpypy3compile -p python3-xrt:amd64  || true\n"
    "fi\n"
    "\n"
    "# End automatically added section\n"
)
FORKY_PRERM = (
    "#!/bin/sh\n"
    "set -e\n"
    "\n"
    "# Automatically added by dh_python3\n"
    "if command -v py3clean >/dev/null 2>&1 && python3 -c 'pass' 2>/dev/null; then\n"
    "\tpy3clean -p python3-xrt:amd64 \n"
    "else\n"
    "\tdpkg -L python3-xrt:amd64 | sed -En -e "
    "'/^(.*)\\/(.+)\\.py$/s,,rm \"\\1/__pycache__/\\2\".*,e'\n"
    "\tfind /usr/lib/python3/dist-packages/ -type d -name __pycache__ -empty -print0 | "
    "xargs --null --no-run-if-empty rmdir\n"
    "fi\n"
    "\n"
    "# End automatically added section\n"
)
FORKY_TRIGGERS = "# Triggers added by dh_makeshlibs/14.5\nactivate-noawait ldconfig\n"
# what dh_installsystemd 14.5 adds to a postrm (its template has no variable)
SYSTEMD_POSTRM_BLOCK = (
    "# Automatically added by dh_installsystemd/14.5\n"
    'if [ "$1" = remove ] && [ -d /run/systemd/system ] ; then\n'
    "\tsystemctl --system daemon-reload >/dev/null || true\n"
    "fi\n"
    "# End automatically added section\n"
)
DH_PYTHON3 = "dh_python3 (dh-python 7.20260309..7.20261019)"
PACKAGE, VERSION, ARCH = "python3-xrt", "1:2.25.0-4+b1", "amd64"


def judge(script: str, text: str, package: str = PACKAGE, arch: str = ARCH) -> ScriptMatch:
    return match(script, text, package, VERSION, arch)


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_forky_python3_xrt_scripts_are_dh_python3_output() -> None:
    assert judge("postinst", FORKY_POSTINST) == ScriptMatch(True, (DH_PYTHON3,), None)
    assert judge("prerm", FORKY_PRERM) == ScriptMatch(True, (DH_PYTHON3,), None)


def test_forky_libxrt2_triggers_are_dh_makeshlibs_output() -> None:
    found = match("triggers", FORKY_TRIGGERS, "libxrt2", VERSION, ARCH)
    assert found == ScriptMatch(True, ("dh_makeshlibs (debhelper 14.5)",), None)


def test_a_script_naming_another_package_is_not_this_packages_output() -> None:
    found = judge("postinst", FORKY_POSTINST, package="python3-numpy")
    assert not found.known
    assert found.unknown_line == (6, "\tpy3compile -p python3-xrt:amd64  || true")


def test_another_packages_name_in_the_script_is_unknown_even_when_it_is_a_prefix() -> None:
    text = FORKY_POSTINST.replace("python3-xrt:amd64", "python3-xrt-evil:amd64")
    assert judge("postinst", text).unknown_line == (
        6,
        "\tpy3compile -p python3-xrt-evil:amd64  || true",
    )


def test_a_path_assignment_before_py3compile_is_unknown_at_its_line() -> None:
    text = FORKY_POSTINST.replace("\tpy3compile", "\tPATH=/tmp:$PATH\n\tpy3compile", 1)
    assert judge("postinst", text) == ScriptMatch(False, (), (6, "\tPATH=/tmp:$PATH"))


def test_a_different_arch_qualifier_is_unknown() -> None:
    text = FORKY_POSTINST.replace(":amd64", ":arm64")
    assert judge("postinst", text).unknown_line == (6, "\tpy3compile -p python3-xrt:arm64  || true")
    assert judge("postinst", text, arch="arm64").known


def test_an_arch_all_package_is_named_without_a_qualifier() -> None:
    plain = FORKY_POSTINST.replace(":amd64", "")
    assert judge("postinst", plain, arch="all").known
    assert not judge("postinst", FORKY_POSTINST, arch="all").known
    assert not judge("postinst", plain, arch="amd64").known


@pytest.mark.parametrize(("name", "text"), [("postinst", FORKY_POSTINST), ("prerm", FORKY_PRERM)])
def test_any_one_character_changed_is_unknown_at_its_line(name: str, text: str) -> None:
    for index, char in enumerate(text):
        for other in ("x" if char != "x" else "y", " " if char != " " else "\t"):
            changed = text[:index] + other + text[index + 1 :]
            found = judge(name, changed)
            line = text[:index].count("\n") + 1
            assert not found.known, (index, other)
            assert found.unknown_line is not None
            # a changed newline joins two lines: the first of them is where it differs
            assert found.unknown_line[0] == line, (index, other, found)
            assert found.unknown_line[1] == changed.split("\n")[line - 1]


@pytest.mark.parametrize(("name", "text"), [("postinst", FORKY_POSTINST), ("prerm", FORKY_PRERM)])
def test_a_character_removed_or_added_anywhere_is_unknown(name: str, text: str) -> None:
    for index in range(len(text)):
        assert not judge(name, text[:index] + text[index + 1 :]).known, index
        assert not judge(name, text[:index] + "\n" + text[index:]).known, index


def test_a_line_after_the_end_marker_is_unknown_at_its_line() -> None:
    text = FORKY_POSTINST + "modprobe amdxdna\n"
    assert judge("postinst", text) == ScriptMatch(False, (DH_PYTHON3,), (13, "modprobe amdxdna"))


def test_a_here_document_is_unknown() -> None:
    text = FORKY_POSTINST + "cat > /etc/modprobe.d/x.conf <<EOF\ninstall amdxdna /bin/sh\nEOF\n"
    assert judge("postinst", text).unknown_line == (13, "cat > /etc/modprobe.d/x.conf <<EOF")


def test_hash_p_is_unknown() -> None:
    text = FORKY_POSTINST.replace("set -e\n", "set -e\nhash -p /tmp/x py3compile\n")
    assert judge("postinst", text) == ScriptMatch(False, (), (3, "hash -p /tmp/x py3compile"))


def test_printf_v_and_a_glob_are_unknown() -> None:
    for line in ("printf -v 'a[$(modprobe x)]' %s 1", "/tm?/x*"):
        text = FORKY_PRERM.replace("fi\n\n#", f"fi\n{line}\n\n#")
        assert judge("prerm", text).unknown_line == (line_of(text, line), line)


def test_the_postinst_is_not_known_as_a_prerm() -> None:
    assert judge("prerm", FORKY_POSTINST).unknown_line == (5, FORKY_POSTINST.split("\n")[4])


def test_a_script_cut_short_points_past_its_last_line() -> None:
    text = FORKY_POSTINST.removesuffix("# End automatically added section\n")
    assert judge("postinst", text) == ScriptMatch(False, (), (12, ""))


def test_crlf_line_ends_are_unknown_at_the_first_line() -> None:
    assert judge("postinst", FORKY_POSTINST.replace("\n", "\r\n")).unknown_line == (
        1,
        "#!/bin/sh\r",
    )


@pytest.mark.parametrize(
    ("frame", "where"),
    [
        ("#!/bin/bash\nset -e\n", (1, "#!/bin/bash")),
        ("#!/bin/sh\nset -eu\n", (2, "set -eu")),
        ("set -e\n", (1, "set -e")),
    ],
)
def test_the_frame_must_be_debhelpers(frame: str, where: tuple[int, str]) -> None:
    text = frame + FORKY_POSTINST.removeprefix("#!/bin/sh\nset -e\n")
    assert judge("postinst", text).unknown_line == where


def test_a_debhelper_snippet_matches_with_its_helper_and_version() -> None:
    text = "#!/bin/sh\nset -e\n" + SYSTEMD_POSTRM_BLOCK
    assert judge("postrm", text) == ScriptMatch(True, ("dh_installsystemd (debhelper 14.5)",), None)


def test_a_debhelper_snippet_is_known_only_in_its_own_script_and_version() -> None:
    text = "#!/bin/sh\nset -e\n" + SYSTEMD_POSTRM_BLOCK
    assert judge("postinst", text).unknown_line == (3, SYSTEMD_POSTRM_BLOCK.split("\n")[0])
    newer = text.replace("/14.5", "/14.99")
    assert judge("postrm", newer).unknown_line == (
        3,
        "# Automatically added by dh_installsystemd/14.99",
    )


def test_snippets_of_several_generators_follow_one_another() -> None:
    start = SYSTEMD_POSTRM_BLOCK.replace("dh_installsystemd", "dh_systemd_start")
    text = "#!/bin/sh\nset -e\n" + start + SYSTEMD_POSTRM_BLOCK + SYSTEMD_POSTRM_BLOCK
    assert judge("postrm", text) == ScriptMatch(
        True, ("dh_systemd_start (debhelper 14.5)", "dh_installsystemd (debhelper 14.5)"), None
    )


def test_a_snippet_of_another_script_after_a_known_one_is_unknown_at_its_marker() -> None:
    text = FORKY_PRERM + SYSTEMD_POSTRM_BLOCK
    marker = SYSTEMD_POSTRM_BLOCK.split("\n")[0]
    after = FORKY_PRERM.count("\n") + 1
    assert judge("prerm", text) == ScriptMatch(False, (DH_PYTHON3,), (after, marker))


def test_a_second_snippet_cut_short_points_past_the_last_line() -> None:
    text = FORKY_PRERM + "\n# Automatically added by dh_python3\n"
    past = text.count("\n") + 1
    assert judge("prerm", text) == ScriptMatch(False, (DH_PYTHON3,), (past, ""))


@pytest.mark.parametrize(
    ("line", "number"),
    [
        ("interest /lib/modules", 3),
        ("activate-noawait update-initramfs", 3),
        ("# Triggers added by dh_installinitramfs/14.5", 3),
    ],
)
def test_triggers_other_than_ldconfigs_are_unknown(line: str, number: int) -> None:
    text = FORKY_TRIGGERS + line + "\n"
    found = match("triggers", text, "libxrt2", VERSION, ARCH)
    assert found == ScriptMatch(False, ("dh_makeshlibs (debhelper 14.5)",), (number, line))


def test_initramfs_trigger_under_a_makeshlibs_marker_is_unknown() -> None:
    text = "# Triggers added by dh_makeshlibs/14.5\nactivate-noawait update-initramfs\n"
    found = match("triggers", text, "libxrt2", VERSION, ARCH)
    assert found.unknown_line == (2, "activate-noawait update-initramfs")


def test_a_trigger_without_its_marker_is_unknown() -> None:
    found = match("triggers", "activate-noawait ldconfig\n", "libxrt2", VERSION, ARCH)
    assert found.unknown_line == (1, "activate-noawait ldconfig")


@pytest.mark.parametrize("script", ["postinst", "prerm", "config", "triggers"])
@pytest.mark.parametrize("text", ["", "#!/bin/sh\nset -e\n", "#!/bin/sh\nset -e\n\n\n"])
def test_a_script_that_runs_nothing_is_known_with_no_generator(script: str, text: str) -> None:
    if script == "triggers" and text:
        text = "\n" * len(text)
    assert judge(script, text) == ScriptMatch(True, (), None)


def test_the_frame_with_anything_but_empty_lines_is_unknown() -> None:
    assert judge("postinst", "#!/bin/sh\nset -e\n \n").unknown_line == (3, " ")
    assert judge("postinst", "#!/bin/sh\nset -e").unknown_line == (2, "set -e")


def test_a_config_script_is_never_generator_output() -> None:
    text = "#!/bin/sh\nset -e\n. /usr/share/debconf/confmodule\n"
    assert judge("config", text).unknown_line == (3, ". /usr/share/debconf/confmodule")


def test_a_package_name_outside_debian_policy_matches_nothing() -> None:
    text = FORKY_POSTINST.replace("python3-xrt", "Python3-XRT")
    assert not judge("postinst", text, package="Python3-XRT").known
    assert not judge("postinst", FORKY_POSTINST, arch="amd64 ").known


def test_an_unknown_script_name_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="isinstallable"):
        match("isinstallable", "", PACKAGE, VERSION, ARCH)


def test_hostile_megabyte_scripts_end_with_their_first_unknown_line() -> None:
    mib = 1024 * 1024
    frame = "#!/bin/sh\nset -e\n"
    long_line = frame + "x" * mib
    assert judge("postinst", long_line).unknown_line == (3, "x" * mib)
    markers = frame + "\n# Automatically added by dh_python3\n" * (mib // 36)
    assert judge("postinst", markers).unknown_line == (5, "")
    blocks = FORKY_POSTINST.removeprefix(frame)
    count = mib // len(blocks)
    repeated = frame + blocks * count + "hash -p /tmp/x true\n"
    assert judge("postinst", repeated) == ScriptMatch(
        False, (DH_PYTHON3,), (3 + 10 * count, "hash -p /tmp/x true")
    )
    blank = frame + "\n" * mib + "x\n"
    assert judge("postinst", blank).unknown_line == (4, "")
    triggers = FORKY_TRIGGERS * (mib // len(FORKY_TRIGGERS)) + "interest /lib/modules\n"
    found = match("triggers", triggers, "libxrt2", VERSION, ARCH)
    assert found.unknown_line == (2 * (mib // len(FORKY_TRIGGERS)) + 1, "interest /lib/modules")


def test_the_catalogue_keeps_only_templates_with_the_package_name_as_variable() -> None:
    data = generators.catalogue()
    allowed = {"debhelper": {"PACKAGE"}, "dh-python": {"PACKAGE", "ARGS"}}
    assert data["templates"]
    for template in data["templates"]:
        assert set(template["variables"]) <= allowed[template["generator"]], template["template"]
        assert set(re.findall(r"#([A-Z_]+)#", template["text"])) == set(template["variables"])
        assert template.get("defaults", {}) == (
            {"ARGS": ""} if "ARGS" in template["variables"] else {}
        )
    names = {t["template"] for t in data["templates"]}
    assert {"postinst-py3compile", "prerm-py3clean"} <= names
    assert not names & {"postinst-modules", "postrm-modules", "maintscript-helper"}
    assert [(t["helper"], t["target"]) for t in data["triggers"]] == [("dh_makeshlibs", "ldconfig")]


def test_the_catalogue_records_where_every_version_came_from() -> None:
    data = generators.catalogue()
    versions = {(g["source"], g["version"]) for g in data["generators"]}
    for generator in data["generators"]:
        assert generator["releases"], generator
        for deb in generator["debs"]:
            assert re.fullmatch(r"[0-9a-f]{64}", deb["sha256"]), deb
    for template in data["templates"] + data["triggers"]:
        for version in template["versions"]:
            assert (template["generator"], version) in versions
    for entry in data["cpack"]["xrt"] + data["cpack"]["xdna-driver"]:
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), entry
        assert entry["kept"] == []


def test_the_catalogue_ships_in_the_wheel() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    shipped = pyproject["tool"]["setuptools"]["package-data"]["xdnaforge"]
    relative = str(generators.DATA_FILE.relative_to(REPO / "src/xdnaforge"))
    assert any(fnmatch(relative, pattern) for pattern in shipped)
