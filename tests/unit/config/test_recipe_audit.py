"""audit.waivers, audit.admit and audit.scripts of a recipe, read with located problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from xdnaforge.config.project import load_project
from xdnaforge.config.recipe import Admitted, ScriptWaiver
from xdnaforge.config.recipe_audit import path_pattern_problem
from xdnaforge.errors import ConfigError

DIGEST = "0123456789abcdef" * 4
RECIPE = "recipes/ubuntu26-compat.yaml"
BAD_CHARACTER = "has a character other than letters, digits, '.', '_', '+', '@', '-' and '*'"


def _audit(project_dir: Path, section: str) -> Path:
    recipe = project_dir / RECIPE
    text = recipe.read_text()
    assert "audit:\n  waivers: []\n" in text
    recipe.write_text(text.replace("audit:\n  waivers: []\n", "audit:\n" + section))
    return recipe


def _problems(project_dir: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_project(project_dir, {})
    return [p.render() for p in caught.value.problems]


def _line(recipe: Path, text: str) -> int:
    return next(n for n, line in enumerate(recipe.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    "pattern",
    [
        "usr/src/xrt-2.19.0/driver/include/version.h",
        "usr/share/xrt/**",
        "usr/lib/x86_64-linux-gnu/libxrt_*.so.2",
        "opt/xilinx/xrt/share/c++@v1/*/x",
    ],
)
def test_package_path_patterns_are_admitted(pattern: str) -> None:
    assert path_pattern_problem(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        (
            "/usr/share/xrt/**",
            "is an absolute path: write the package's path without the leading '/'",
        ),
        ("usr//share", "component 2 is empty (a '//' or a trailing '/')"),
        ("usr/share/", "component 3 is empty (a '//' or a trailing '/')"),
        ("", "component 1 is empty (a '//' or a trailing '/')"),
        ("usr/../etc/shadow", "component 2 is '..': a package path names its directories"),
        ("./usr", "component 1 is '.': a package path names its directories"),
        ("usr/**/lib", "'**' (anything below) may only be the last component"),
        ("usr/lib**", "component 2 has '**' inside it: '**' is a whole last component"),
        (
            "usr/share/x y",
            f"component 3 {BAD_CHARACTER}",
        ),
        (
            "usr\\share",
            f"component 1 {BAD_CHARACTER}",
        ),
        (
            "usr/[ab]",
            f"component 2 {BAD_CHARACTER}",
        ),
        ("**", "admits every path: name the directories it is below"),
        ("*/**", "admits every path: name the directories it is below"),
    ],
)
def test_other_path_patterns_are_refused_with_the_reason(pattern: str, problem: str) -> None:
    assert path_pattern_problem(pattern) == problem


def test_admitted_paths_and_script_waivers_reach_the_recipe(project_dir: Path) -> None:
    _audit(
        project_dir,
        "  waivers: []\n"
        "  admit:\n"
        "    - path: usr/src/xrt-2.19.0/driver/include/version.h\n"
        "      reason: the DKMS tree's generated header\n"
        "      package: xrt-base\n"
        "    - {path: usr/share/xrt/**, reason: data files}\n"
        "  scripts:\n"
        "    - package: xrt_plugin-amdxdna\n"
        "      script: postinst\n"
        f"      sha256: {DIGEST}\n"
        "      justification: 'reviewed: runs ldconfig and nothing else'\n",
    )
    recipe = load_project(project_dir, {}).recipes["ubuntu26-compat"]
    assert recipe.admit == (
        Admitted(
            path="usr/src/xrt-2.19.0/driver/include/version.h",
            reason="the DKMS tree's generated header",
            package="xrt-base",
        ),
        Admitted(path="usr/share/xrt/**", reason="data files", package=None),
    )
    assert recipe.script_waivers == (
        ScriptWaiver(
            package="xrt_plugin-amdxdna",
            script="postinst",
            sha256=DIGEST,
            justification="reviewed: runs ldconfig and nothing else",
        ),
    )


def test_a_recipe_without_them_admits_nothing(project_dir: Path) -> None:
    recipe = load_project(project_dir, {}).recipes["ubuntu26-compat"]
    assert (recipe.admit, recipe.script_waivers) == ((), ())


def test_admit_mistakes_are_located(project_dir: Path) -> None:
    recipe = _audit(
        project_dir,
        "  admit:\n"
        "    - path: /etc/shadow\n"
        "      reason: hunter2\n"
        "    - path: usr/share/../../etc\n"
        "      reason: x\n"
        "    - path: usr/share/xrt/**\n"
        "    - path: usr/share/xrt/**\n"
        "      reason: ''\n"
        "    - path: usr/share/doc/**\n"
        "      reason: docs\n"
        "      package: xrt-bsae\n"
        "    - {path: usr/share/a, reason: a}\n"
        "    - {path: usr/share/a, reason: again}\n",
    )
    at = _line(recipe, "- path: /etc/shadow")
    assert _problems(project_dir) == [
        f"{RECIPE}:{at}:7: audit.admit[0].path: is an absolute path: write the package's path "
        "without the leading '/'\n    hint: e.g. usr/share/xrt/** or usr/lib/*.so",
        f"{RECIPE}:{at + 2}:7: audit.admit[1].path: component 3 is '..': a package path names "
        "its directories\n    hint: e.g. usr/share/xrt/** or usr/lib/*.so",
        f"{RECIPE}:{at + 4}:7: audit.admit[2]: missing required key 'reason'",
        f"{RECIPE}:{at + 6}:7: audit.admit[3].reason: must not be empty",
        f"{RECIPE}:{at + 9}:7: audit.admit[4].package: names a package the recipe does not "
        "produce (did you mean 'xrt-base'?)\n    hint: the recipe produces: xrt-base, "
        "xrt-base-dev, xrt-npu, xrt_plugin-amdxdna",
        f"{RECIPE}:{at + 11}:7: audit.admit[6]: the same path is admitted twice",
    ]


def test_script_waiver_mistakes_are_located_without_the_values(project_dir: Path) -> None:
    recipe = _audit(
        project_dir,
        "  scripts:\n"
        "    - package: xrt-npu\n"
        "      script: postinstt\n"
        "      sha256: DEADBEEF\n"
        "      justification: ok\n"
        f"    - {{package: xrt-npu, script: prerm, sha256: {DIGEST.upper()}, justification: x}}\n"
        f"    - {{package: xrt-nope, script: prerm, sha256: {DIGEST}, justification: x}}\n"
        f"    - {{package: xrt-npu, script: prerm, sha256: {DIGEST}}}\n"
        f"    - {{package: xrt-npu, script: config, sha256: {DIGEST}, justification: x}}\n"
        f"    - {{package: xrt-npu, script: config, sha256: {DIGEST}, justification: y}}\n",
    )
    at = _line(recipe, "- package: xrt-npu")
    problems = _problems(project_dir)
    assert problems == [
        f"{RECIPE}:{at + 1}:7: audit.scripts[0].script: expected one of preinst, postinst, "
        "prerm, postrm, config, triggers, got a string of 9 characters (did you mean "
        "'postinst'?)",
        f"{RECIPE}:{at + 2}:7: audit.scripts[0].sha256: expected a sha256 (64 lowercase hex), "
        "got a string of 8 characters",
        f"{RECIPE}:{at + 4}:41: audit.scripts[1].sha256: expected a sha256 (64 lowercase hex), "
        "got a string of 64 characters, not all of them 0-9 or a-f",
        f"{RECIPE}:{at + 5}:8: audit.scripts[2].package: names a package the recipe does not "
        "produce (did you mean 'xrt-npu'?)\n    hint: the recipe produces: xrt-base, "
        "xrt-base-dev, xrt-npu, xrt_plugin-amdxdna",
        f"{RECIPE}:{at + 6}:7: audit.scripts[3]: missing required key 'justification'",
        f"{RECIPE}:{at + 8}:7: audit.scripts[5]: the same script is waived twice",
    ]
    text = "\n".join(problems)
    assert "DEADBEEF" not in text
    assert DIGEST.upper() not in text


def test_unknown_audit_keys_are_named_with_the_known_ones(project_dir: Path) -> None:
    recipe = _audit(project_dir, "  admitt: []\n")
    at = _line(recipe, "admitt")
    assert _problems(project_dir) == [
        f"{RECIPE}:{at}:3: audit.admitt: unknown key 'admitt' (did you mean 'admit'?)"
    ]


def test_a_waiver_for_a_package_not_produced_is_located_at_its_own_entry(
    project_dir: Path,
) -> None:
    recipe = _audit(
        project_dir,
        "  waivers:\n"
        "    - {rule: setuid}\n"
        "    - {rule: setuid, package: xrt-nope, justification: x}\n",
    )
    at = _line(recipe, "- {rule: setuid}")
    assert _problems(project_dir) == [
        f"{RECIPE}:{at}:7: audit.waivers[0]: missing required key 'justification'",
        f"{RECIPE}:{at + 1}:22: audit.waivers[1].package: names a package the recipe does not "
        "produce "
        "(did you mean 'xrt-npu'?)\n    hint: the recipe produces: xrt-base, xrt-base-dev, "
        "xrt-npu, xrt_plugin-amdxdna",
    ]
