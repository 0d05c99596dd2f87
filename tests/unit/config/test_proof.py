"""Proofs: parsing the Proof/Proof-Error fields and judging the runs without and with."""

from __future__ import annotations

from xdnaforge.config.proof import (
    BROKEN,
    NOT_NEEDED,
    PROVEN,
    TIMEOUT,
    WRONG_ERROR,
    Attempt,
    Proof,
    first_error,
    judge,
    parse_proof,
)
from xdnaforge.config.series import parse_header

HEADER = """Subject: fix
Upstream-Status: Pending [not yet sent]
Repository: xrt
{extra}
diff --git a/x b/x
"""

PROOF = Proof(argv=("cc", "x.c"), error=r"error: .uint64_t.", none_reason=None)
FAIL = Attempt(returncode=1, output="x.c:1:2: error: 'uint64_t' was not declared\n")
OTHER = Attempt(returncode=1, output="x.c:1: fatal error: foo.h: No such file\n")
PASS = Attempt(returncode=0, output="")
HUNG = Attempt(returncode=None, output="")


def test_header_carries_a_proof_command_and_its_error() -> None:
    header, problems = parse_header(
        HEADER.format(extra="Proof: {cxx} -fsyntax-only a.h\nProof-Error: was not declared")
    )
    assert problems == []
    assert header is not None
    assert header.proof is not None
    assert header.proof.argv == ("{cxx}", "-fsyntax-only", "a.h")
    assert header.proof.error == "was not declared"


def test_header_without_a_proof_has_none() -> None:
    header, _ = parse_header(HEADER.format(extra=""))
    assert header is not None
    assert header.proof is None


def test_proof_none_needs_a_reason_and_is_shown() -> None:
    header, problems = parse_header(HEADER.format(extra="Proof: none (needs the NPU)"))
    assert problems == []
    assert header is not None
    assert header.proof is not None
    assert header.proof.text == "none (needs the NPU)"
    _, problems = parse_header(HEADER.format(extra="Proof: none"))
    assert problems == [(4, "write 'Proof: none (<reason>)' with the reason in parentheses")]


def test_proof_command_needs_a_valid_error_regex() -> None:
    _, problems = parse_header(HEADER.format(extra="Proof: cc a.c"))
    assert problems == [(4, "a proof command needs 'Proof-Error: <regex the failure must show>'")]
    _, problems = parse_header(HEADER.format(extra="Proof: cc a.c\nProof-Error: (["))
    assert len(problems) == 1
    assert "not a valid regular expression" in problems[0][1]
    _, problems = parse_header(HEADER.format(extra="Proof-Error: x"))
    assert problems == [(4, "'Proof-Error' needs a 'Proof' command")]


def test_unknown_placeholder_is_refused() -> None:
    _, problems = parse_proof("{gcc} a.c", "error")
    assert problems == [
        "an unknown placeholder in the proof (known: {cc}, {cxx}, {python}, {scratch})"
    ]
    assert parse_proof("cc {flag}", "error", flag_allowed=True)[1] == []


def test_fails_without_and_passes_with_is_proven() -> None:
    verdict = judge(PROOF, "forky twin", FAIL, PASS)
    assert verdict.outcome == PROVEN
    assert verdict.first_error == "x.c:1:2: error: 'uint64_t' was not declared"


def test_passes_without_is_not_needed_on_that_environment() -> None:
    verdict = judge(PROOF, "forky twin", PASS, PASS)
    assert verdict.outcome == NOT_NEEDED
    assert "not needed on forky twin" in verdict.detail


def test_fails_after_is_broken() -> None:
    assert judge(PROOF, "e", FAIL, OTHER).outcome == BROKEN
    assert judge(PROOF, "e", PASS, OTHER).outcome == BROKEN


def test_another_failure_than_the_expected_one_is_a_wrong_error() -> None:
    verdict = judge(PROOF, "e", OTHER, PASS)
    assert verdict.outcome == WRONG_ERROR
    assert verdict.first_error == "x.c:1: fatal error: foo.h: No such file"


def test_a_run_that_did_not_finish_is_a_timeout() -> None:
    assert judge(PROOF, "e", HUNG, PASS).outcome == TIMEOUT
    assert judge(PROOF, "e", FAIL, HUNG).outcome == TIMEOUT


def test_first_error_line() -> None:
    text = "-- ok\nCMake Error at x.cmake:3 (find_package):\n  more\n"
    assert first_error(text) == "CMake Error at x.cmake:3 (find_package):"
    assert first_error("all good\n") is None
