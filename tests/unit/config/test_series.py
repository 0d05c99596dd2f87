from __future__ import annotations

from xdnaforge.config.series import parse_header, parse_series

HEADER = """Subject: fix the thing
Upstream-Status: Backport [b979d16f2ee91e2343a989d7a63d14baa4be8e4f]
Repository: xrt
Description:
 longer text

diff --git a/x b/x
"""


def test_series_entries_comments_and_digests() -> None:
    text = "# comment\n0001-a.patch\n\n0002-b.patch sha256=" + "a" * 64 + "  # trailing\n"
    entries, problems = parse_series(text)
    assert problems == []
    assert [(e.file, e.sha256, e.line) for e in entries] == [
        ("0001-a.patch", None, 2),
        ("0002-b.patch", "a" * 64, 4),
    ]


def test_series_rejects_paths_duplicates_and_bad_digests() -> None:
    text = "../x.patch\na.patch\na.patch\nb.patch sha256=xyz\n"
    _, problems = parse_series(text)
    assert [line for line, _ in problems] == [1, 3, 4]
    assert "listed twice (first on line 2)" in problems[1][1]


def test_header_backport_names_the_commit() -> None:
    header, problems = parse_header(HEADER)
    assert problems == []
    assert header is not None
    assert header.status == "Backport"
    assert header.repository == "xrt"
    assert header.upstream_commit == "b979d16f2ee91e2343a989d7a63d14baa4be8e4f"


def test_header_problems_are_all_reported() -> None:
    header, problems = parse_header("Upstream-Status: Backport\n--- a/x\n")
    assert header is None
    messages = " | ".join(message for _, message in problems)
    assert "Subject:" in messages
    assert "Repository:" in messages
    assert "full upstream commit" in messages


def test_inappropriate_needs_a_reason_and_unknown_status_is_refused() -> None:
    _, problems = parse_header("Subject: s\nRepository: .\nUpstream-Status: Inappropriate\n")
    assert any("needs a reason" in m for _, m in problems)
    _, problems = parse_header("Subject: s\nRepository: .\nUpstream-Status: Maybe\n")
    assert any("not one of" in m for _, m in problems)


def test_header_stops_at_the_first_diff() -> None:
    text = (
        "Subject: s\nRepository: .\nUpstream-Status: Pending\ndiff --git a/x b/x\nRepository: y\n"
    )
    header, _ = parse_header(text)
    assert header is not None
    assert header.repository == "."
