"""CTest's summary in a build log: pure parsing."""

from __future__ import annotations

import re
from dataclasses import dataclass

# ctest's summary line (Source/CTest/cmCTestTestHandler.cxx); test_runners reads it too
SUMMARY_RE = re.compile(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)")
_LISTED_RE = re.compile(r"^\s*\d+\s+-\s+(.+?)\s+\((\w[\w ]*)\)\s*$")


@dataclass(frozen=True, slots=True)
class CtestSummary:
    passed: int
    failed: int
    skipped: int
    total: int
    failed_tests: tuple[str, ...]
    skipped_tests: tuple[str, ...]


def parse_ctest(log: str) -> CtestSummary | None:
    """The last ctest summary in a log, with the failed and not-run tests it lists."""
    matches = list(SUMMARY_RE.finditer(log))
    if not matches:
        return None
    last = matches[-1]
    failed, total = int(last.group(2)), int(last.group(3))
    failed_tests: list[str] = []
    skipped_tests: list[str] = []
    section: list[str] | None = None
    for line in log[last.end() :].splitlines():
        if line.startswith("The following tests FAILED"):
            section = failed_tests
        elif line.startswith("The following tests did not run"):
            section = skipped_tests
        elif section is not None:
            match = _LISTED_RE.match(line)
            if match:
                section.append(match.group(1))
            elif line.strip():
                section = None
    # ctest counts skipped tests among the passed ones in its percentage
    skipped = len(skipped_tests)
    return CtestSummary(
        passed=total - failed - skipped,
        failed=failed,
        skipped=skipped,
        total=total,
        failed_tests=tuple(failed_tests),
        skipped_tests=tuple(skipped_tests),
    )


def _tokens(test: str) -> set[str]:
    """The words of a test's name ("[xclbinutil]:xclbintest" -> xclbinutil, xclbintest)."""
    return {word.lower() for word in re.split(r"[^A-Za-z0-9_]+", test) if len(word) >= 4}


def related_missing(
    failed_tests: tuple[str, ...] | list[str], missing: dict[str, list[str]], log: str
) -> list[str]:
    """Files the fetch reported missing from a partial mirror (lock.json `missing_files`,
    repository -> paths) that a failed test may have needed: the log names the file, or its
    path holds a word of the test's name. Pure."""
    words = set().union(*(_tokens(t) for t in failed_tests)) if failed_tests else set()
    found = []
    for repository, paths in sorted(missing.items()):
        for path in paths:
            parts = {p.lower() for p in re.split(r"[/._-]+", path)}
            name = path.rsplit("/", 1)[-1]
            if name in log or words & parts:
                found.append(path if repository == "." else f"{repository}/{path}")
    return found
