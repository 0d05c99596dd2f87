"""Which Release files are trusted: only one a named key signed; every other case refused
with what gpgv saw, and the named keys a keyring file lacks listed."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.config.keyring import ArchiveKeyring
from xdnaforge.environments.keyring import fields, judge, missing_keys, release_files
from xdnaforge.tools.gpgv import Signatures

A, B = "A" * 40, "B" * 40
RING = ArchiveKeyring(fingerprints=(A, B), file="/k.gpg", source="a package", origin="r.yaml:3")


def test_a_named_key_that_signed_is_the_verdict() -> None:
    assert judge(Signatures(valid=(B, "C" * 40), unknown=(), bad=()), (A, B)) == (B,)


def test_a_good_signature_by_another_key_is_refused() -> None:
    verdict = judge(Signatures(valid=("C" * 40,), unknown=(), bad=()), (A,))
    assert verdict == f"it is signed by {'C' * 40}, none of the named keys"


def test_an_unknown_key_a_bad_signature_and_none_are_each_said() -> None:
    assert "which the trusted keyring does not hold" in str(
        judge(Signatures(valid=(), unknown=("871920D1991BC93C",), bad=()), (A,))
    )
    assert "not good (BADSIG" in str(
        judge(Signatures(valid=(), unknown=(), bad=("BADSIG x",)), (A,))
    )
    assert judge(Signatures(valid=(), unknown=(), bad=()), (A,)) == "it carries no signature"


def test_missing_keys_are_the_named_ones_the_file_lacks() -> None:
    assert missing_keys(RING, {A: "key a"}) == [B]
    assert missing_keys(RING, {A: "", B: ""}) == []


def test_release_fields_come_from_the_signed_paragraph() -> None:
    text = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nOrigin: Ubuntu\nSuite: resolute\n"
        "Codename: resolute\nDate: Thu, 23 Apr 2026 17:07:15 UTC\nSHA256:\n x 1 y\n"
    )
    assert fields(text) == {
        "Origin": "Ubuntu",
        "Suite": "resolute",
        "Codename": "resolute",
        "Date": "Thu, 23 Apr 2026 17:07:15 UTC",
    }


def test_release_files_pairs_a_detached_signature_with_its_release(tmp_path: Path) -> None:
    (tmp_path / "a_dists_x_InRelease").write_text("signed")
    (tmp_path / "b_dists_y_Release").write_text("r")
    (tmp_path / "b_dists_y_Release.gpg").write_text("sig")
    (tmp_path / "c_dists_z_Release.gpg").write_text("orphan")
    assert release_files(tmp_path) == [
        (tmp_path / "a_dists_x_InRelease", None),
        (tmp_path / "b_dists_y_Release.gpg", tmp_path / "b_dists_y_Release"),
    ]
