"""An archive's signing keys as the recipe or site names them: fingerprints, a keyring file
that holds them, and where that key comes from (the words a refusal shows).

Pure: the model and its parser over a schema Reader (`keyring: {file, fingerprints, from}`
under a recipe's `distro.archive` or `build.environment`, or a site's `environments.<name>`).
Checking a signature against the keys is environments/keyring.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from xdnaforge.schema import Reader
from xdnaforge.yamlfile import KeyPath

FINGERPRINT_RE = re.compile(r"^[0-9A-F]{40}$")
KEYS = ("file", "fingerprints", "from")


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchiveKeyring:
    """The keys an archive's Release file must be signed with."""

    fingerprints: tuple[str, ...]  # primary-key fingerprints, 40 upper-case hex digits
    file: str  # the keyring file that holds them (binary OpenPGP, as apt's signed-by wants)
    source: str  # where the key comes from: a package, a URL
    origin: str  # "recipes/ubuntu26-compat.yaml:120" or "site.yaml:4"

    def describe(self) -> str:
        return f"{', '.join(self.fingerprints)} from {self.file}"


def parse_keyring(reader: Reader, value: Any, path: KeyPath) -> ArchiveKeyring | None:
    """`keyring: {file, fingerprints: [...], from}`; None (and a problem) when it is not one."""
    table = reader.mapping(value, path, required=KEYS)
    if table is None:
        return None
    fingerprints = []
    for index, item in enumerate(reader.sequence(table, "fingerprints", path)):
        text = reader.as_string(item, (*path, "fingerprints", index))
        if text is None:
            continue
        normal = text.replace(" ", "").upper()
        if not FINGERPRINT_RE.match(normal):
            reader.problem(
                (*path, "fingerprints", index),
                "is not an OpenPGP v4 fingerprint (40 hex digits)",
                hint="copy it from `gpg --show-keys --with-colons <keyring>` (the fpr line)",
            )
            continue
        fingerprints.append(normal)
    if "fingerprints" in table and not fingerprints and not reader.problems:
        reader.problem((*path, "fingerprints"), "name at least one key")
    file = reader.string(table, "file", path)
    source = reader.string(table, "from", path)
    if file is not None and not file.startswith("/"):
        reader.problem(
            (*path, "file"), "is not an absolute path", hint="as in /usr/share/keyrings/"
        )
        return None
    if file is None or source is None or not fingerprints:
        return None
    line = reader.document.where(path)[0]
    return ArchiveKeyring(
        fingerprints=tuple(fingerprints),
        file=file,
        source=source,
        origin=f"{reader.source}:{line}",
    )
