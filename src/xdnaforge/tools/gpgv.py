"""gpgv and gpg's keyring-file queries: checking an archive's Release signature against a
keyring file, listing the keys a keyring file holds, and cutting a keyring down to named
keys; argv builders, pure parsers of `--status-fd` and `--with-colons` output, thin runners.

Nothing reads or writes the user's own GnuPG home: every gpg call gets a private `--homedir`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xdnaforge.process.run import CommandResult, run

TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class Signatures:
    """What gpgv said about one signed file."""

    valid: tuple[str, ...]  # primary-key fingerprints of the good signatures
    unknown: tuple[str, ...]  # key ids (or fingerprints) of signatures no key checked
    bad: tuple[str, ...]  # the status lines of bad, expired or revoked signatures


def verify_argv(keyring: Path, signed: Path, data: Path | None = None) -> list[str]:
    """`gpgv` on an InRelease file (or a detached Release.gpg with its Release)."""
    argv = ["gpgv", "--status-fd", "1", "--keyring", str(keyring), str(signed)]
    return [*argv, str(data)] if data is not None else argv


def show_keys_argv(home: Path, keyring: Path) -> list[str]:
    # --show-keys reads the file without importing it anywhere (gpg >= 2.2.8)
    return ["gpg", "--homedir", str(home), "--batch", "--with-colons", "--show-keys", str(keyring)]


def export_argv(home: Path, keyring: Path, fingerprints: tuple[str, ...], out: Path) -> list[str]:
    """Export exactly `fingerprints` from `keyring` into the binary keyring `out`."""
    return [
        "gpg",
        "--homedir",
        str(home),
        "--batch",
        "--yes",
        "--no-default-keyring",
        "--keyring",
        str(keyring),
        "--output",
        str(out),
        "--export",
        *fingerprints,
    ]


def clearsign_argv(key: str, source: Path, out: Path) -> list[str]:
    """Clear-sign `source` with the user's key (publishing signs the .buildinfo it ships)."""
    return [
        "gpg",
        "--batch",
        "--yes",
        "--local-user",
        key,
        "--output",
        str(out),
        "--clearsign",
        str(source),
    ]


def parse_status(text: str) -> Signatures:
    """gpgv's `--status-fd` lines (gnupg's doc/DETAILS) -> the signatures it judged."""
    valid: list[str] = []
    unknown: list[str] = []
    bad: list[str] = []
    for line in text.splitlines():
        if not line.startswith("[GNUPG:] "):
            continue
        fields = line.split()[1:]
        if not fields:
            continue
        tag = fields[0]
        if tag == "VALIDSIG" and len(fields) > 1:
            # the last field is the primary key's fingerprint (the signing key may be a subkey)
            primary = fields[10] if len(fields) > 10 else fields[1]
            if primary not in valid:
                valid.append(primary.upper())
        elif tag in ("NO_PUBKEY", "ERRSIG") and len(fields) > 1:
            key = fields[7] if tag == "ERRSIG" and len(fields) > 7 else fields[1]
            if key not in unknown and not any(key.endswith(k) or k.endswith(key) for k in unknown):
                unknown.append(key.upper())
        elif tag in ("BADSIG", "EXPKEYSIG", "REVKEYSIG", "EXPSIG"):
            bad.append(" ".join(fields))
    return Signatures(valid=tuple(valid), unknown=tuple(unknown), bad=tuple(bad))


def parse_keys(text: str) -> dict[str, str]:
    """`--with-colons --show-keys` -> {primary fingerprint: its first user id}."""
    keys: dict[str, str] = {}
    current: str | None = None
    expect_primary = False
    for line in text.splitlines():
        fields = line.split(":")
        if fields[0] == "pub":
            expect_primary, current = True, None
        elif fields[0] == "sub":
            expect_primary = False
        elif fields[0] == "fpr" and expect_primary and len(fields) > 9:
            current = fields[9].upper()
            keys[current] = ""
            expect_primary = False
        elif fields[0] == "uid" and current is not None and len(fields) > 9 and not keys[current]:
            keys[current] = fields[9]
    return keys


def verify(keyring: Path, signed: Path, cwd: Path, data: Path | None = None) -> Signatures:
    """Run gpgv (exit 1 or 2 for no good signature: the status lines say why)."""
    result = run(verify_argv(keyring, signed, data), cwd=cwd, timeout=TIMEOUT, ok_codes=(0, 1, 2))
    return parse_status(result.stdout)


def show_keys(home: Path, keyring: Path, cwd: Path) -> dict[str, str]:
    result = run(show_keys_argv(home, keyring), cwd=cwd, timeout=TIMEOUT, ok_codes=(0, 2))
    return parse_keys(result.stdout)


def export(
    home: Path, keyring: Path, fingerprints: tuple[str, ...], out: Path, cwd: Path
) -> CommandResult:
    return run(export_argv(home, keyring, fingerprints, out), cwd=cwd, timeout=TIMEOUT)
