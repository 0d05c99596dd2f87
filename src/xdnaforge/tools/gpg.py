"""gpg: argv builders for the key queries publishing needs, and their parsers; pure."""

from __future__ import annotations

from pathlib import Path


def fingerprint_argv(key: str) -> list[str]:
    # --with-colons: the machine-readable listing (gpg's doc/DETAILS), stable across locales
    return ["gpg", "--batch", "--with-colons", "--fingerprint", key]


def export_argv(key: str, output: Path) -> list[str]:
    # --output: the binary keyring goes straight to a file (signed-by wants binary, not armor)
    return ["gpg", "--batch", "--yes", "--output", str(output), "--export", key]


def parse_fingerprint(text: str) -> str | None:
    """The primary key's fingerprint: the first `fpr` record after the `pub` record."""
    seen_pub = False
    for line in text.splitlines():
        fields = line.split(":")
        if fields[0] == "pub":
            seen_pub = True
        elif fields[0] == "fpr" and seen_pub and len(fields) > 9:
            return fields[9]
    return None
