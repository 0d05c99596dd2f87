"""An archive's keys as a recipe names them: fingerprints normalised, a relative keyring file
or a fingerprint that is not one refused with its key path, and where the key comes from kept
for the refusal a missing key gets."""

from __future__ import annotations

from typing import Any

from xdnaforge.config.keyring import parse_keyring
from xdnaforge.schema import Reader
from xdnaforge.yamlfile import parse

UBUNTU = "F6ECB3762474EDA9D21B7022871920D1991BC93C"


def read(text: str) -> tuple[Any, Reader]:
    document = parse(text, "recipes/r.yaml")
    reader = Reader(document)
    return parse_keyring(reader, document.data["keyring"], ("keyring",)), reader


def test_a_keyring_names_its_keys_file_and_source() -> None:
    keyring, reader = read(
        "keyring:\n  file: /usr/share/keyrings/ubuntu-archive-keyring.gpg\n"
        "  fingerprints: ['f6ec b376 2474 eda9 d21b  7022 8719 20d1 991b c93c']\n"
        "  from: the ubuntu-keyring package\n"
    )
    assert reader.problems == []
    assert keyring.fingerprints == (UBUNTU,)
    assert keyring.file == "/usr/share/keyrings/ubuntu-archive-keyring.gpg"
    assert keyring.source == "the ubuntu-keyring package"
    assert keyring.origin == "recipes/r.yaml:1"


def test_a_key_id_is_not_a_fingerprint() -> None:
    keyring, reader = read(
        "keyring:\n  file: /k.gpg\n  fingerprints: [871920D1991BC93C]\n  from: somewhere\n"
    )
    assert keyring is None
    [problem] = reader.problems
    assert problem.key_path == "keyring.fingerprints[0]"
    assert "40 hex digits" in problem.message


def test_a_relative_file_and_a_missing_source_are_refused() -> None:
    keyring, reader = read(f"keyring:\n  file: k.gpg\n  fingerprints: [{UBUNTU}]\n")
    assert keyring is None
    messages = {p.key_path: p.message for p in reader.problems}
    assert "keyring.file" in messages
    assert "absolute" in messages["keyring.file"]
    assert any("from" in p.message for p in reader.problems)
