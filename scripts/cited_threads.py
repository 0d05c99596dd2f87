"""Print every thread the corpus, the field cases and the fresh sets cite, one per line: the
list a collector of a new fresh set is given, so that it takes none of them.

Usage: python scripts/cited_threads.py > used_urls.txt

A collector compares a candidate's URL without its anchor (`#...`) and reads
github.com/ROCm/FastFlowLM as github.com/FastFlowLM/FastFlowLM (evaluate.thread_of); a file
of the library's index is listed by its id (`library-file:N`). The same rule is what
tests/unit/diagnosis/test_evaluate.py checks a fresh set against.
"""

from __future__ import annotations

import sys
from pathlib import Path

from xdnaforge.diagnosis.evaluate import cited_threads

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    fixtures = REPO / "tests" / "fixtures"
    for thread in sorted(
        cited_threads(fixtures / "corpus", fixtures / "field", fixtures / "fresh")
    ):
        print(thread)
    return 0


if __name__ == "__main__":
    sys.exit(main())
