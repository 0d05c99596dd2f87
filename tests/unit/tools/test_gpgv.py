# ruff: noqa: E501  (real status and colon lines, kept whole)
"""gpgv's status lines and gpg's key listing as the archives' real signatures print them
(resolute's InRelease against ubuntu-keyring, forky's against debian-archive-keyring)."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.tools import gpgv

UBUNTU = "F6ECB3762474EDA9D21B7022871920D1991BC93C"
# gpgv --status-fd 1 on forky's InRelease (2026-12-01): two signatures by subkeys
FORKY = """[GNUPG:] NEWSIG
[GNUPG:] KEY_CONSIDERED B8B80B5B623EAB6AD8775C45B7C5D7D6350947F8 0
[GNUPG:] SIG_ID x 2026-10-30 1793347764
[GNUPG:] GOODSIG 6ED0E7B82643E131 Debian Archive Automatic Signing Key (12/bookworm) <ftpmaster@debian.org>
[GNUPG:] VALIDSIG 4CB50190207B4758A3F73A796ED0E7B82643E131 2026-10-30 1793347764 0 4 0 1 8 01 B8B80B5B623EAB6AD8775C45B7C5D7D6350947F8
[GNUPG:] NEWSIG
[GNUPG:] GOODSIG 78DBA3BC47EF2265 Debian Archive Automatic Signing Key (13/trixie) <ftpmaster@debian.org>
[GNUPG:] VALIDSIG B8E5F13176D2A7A75220028078DBA3BC47EF2265 2026-10-30 1793347769 0 4 0 1 8 01 04B54C3CDCA79751B16BC6B5225629DF75B188BD
"""
# the same on resolute's InRelease without Ubuntu's key
MISSING = f"""[GNUPG:] NEWSIG
[GNUPG:] ERRSIG 871920D1991BC93C 1 10 01 1776964050 9 {UBUNTU}
[GNUPG:] NO_PUBKEY 871920D1991BC93C
"""


def test_valid_signatures_name_the_primary_keys_not_the_subkeys() -> None:
    found = gpgv.parse_status(FORKY)
    assert found.valid == (
        "B8B80B5B623EAB6AD8775C45B7C5D7D6350947F8",
        "04B54C3CDCA79751B16BC6B5225629DF75B188BD",
    )
    assert found.unknown == ()
    assert found.bad == ()


def test_a_missing_key_is_named_by_its_fingerprint_once() -> None:
    found = gpgv.parse_status(MISSING)
    assert found.valid == ()
    assert found.unknown == (UBUNTU,)


def test_bad_and_expired_signatures_are_kept() -> None:
    found = gpgv.parse_status("[GNUPG:] EXPKEYSIG 871920D1991BC93C Ubuntu\n[GNUPG:] BADSIG 1 x\n")
    assert found.bad == ("EXPKEYSIG 871920D1991BC93C Ubuntu", "BADSIG 1 x")


def test_show_keys_lists_primary_fingerprints_with_their_first_user_id() -> None:
    listing = (
        "pub:-:4096:1:3B4FE6ACC0B21F32:1336770936:::-:::scSC::::::23::0:\n"
        "fpr:::::::::790BC7277767219C42C86F933B4FE6ACC0B21F32:\n"
        "uid:-::::1336770936::x::Ubuntu Archive Automatic Signing Key (2012) <ftpmaster@ubuntu.com>::::::::::0:\n"
        "pub:-:4096:1:871920D1991BC93C:1537196506:::-:::scSC::::::23::0:\n"
        f"fpr:::::::::{UBUNTU}:\n"
        "uid:-::::1537196506::y::Ubuntu Archive Automatic Signing Key (2018) <ftpmaster@ubuntu.com>::::::::::0:\n"
        "sub:-:4096:1:0123456789ABCDEF:1:::::s::::::23:\n"
        "fpr:::::::::1111111111111111111111110123456789ABCDEF:\n"
    )
    assert gpgv.parse_keys(listing) == {
        "790BC7277767219C42C86F933B4FE6ACC0B21F32": (
            "Ubuntu Archive Automatic Signing Key (2012) <ftpmaster@ubuntu.com>"
        ),
        UBUNTU: "Ubuntu Archive Automatic Signing Key (2018) <ftpmaster@ubuntu.com>",
    }


def test_argv_keeps_gpg_away_from_the_users_home() -> None:
    home, ring = Path("/b/.gnupg-x"), Path("/usr/share/keyrings/u.gpg")
    assert gpgv.show_keys_argv(home, ring)[:3] == ["gpg", "--homedir", "/b/.gnupg-x"]
    export = gpgv.export_argv(home, ring, (UBUNTU,), Path("/b/k.gpg"))
    assert export[:3] == ["gpg", "--homedir", "/b/.gnupg-x"]
    assert "--no-default-keyring" in export
    assert export[-2:] == ["--export", UBUNTU]
    assert gpgv.verify_argv(Path("/b/k.gpg"), Path("InRelease")) == [
        "gpgv",
        "--status-fd",
        "1",
        "--keyring",
        "/b/k.gpg",
        "InRelease",
    ]
    assert gpgv.verify_argv(Path("/b/k.gpg"), Path("Release.gpg"), Path("Release"))[-2:] == [
        "Release.gpg",
        "Release",
    ]
