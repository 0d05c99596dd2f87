"""The streaming reader on in-memory .debs: formats, and every way a file can be broken."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.debs import (
    TAR_END,
    ar_archive,
    control_tar,
    deb_bytes,
    hand_deb,
    module_bytes,
    plugin,
    tar_bytes,
    tar_entry,
    xrt_base,
)
from xdnaforge.debs import debfile
from xdnaforge.debs.debfile import DebError, read_deb_stream
from xdnaforge.debs.rules import wants_text


def read(data: bytes) -> object:
    return read_deb_stream(io.BytesIO(data), "x.deb", wants_text)


@pytest.mark.parametrize("compression", ["", ".gz", ".xz", ".bz2", ".zst"])
def test_every_compression_reads_the_same(compression: str) -> None:
    control = ".gz" if compression == ".bz2" else compression  # dpkg: no bzip2 control.tar
    deb = read_deb_stream(
        io.BytesIO(deb_bytes(plugin(nokmod=False), compression)), "p.deb", wants_text
    )
    assert deb.package == "xrt_plugin-amdxdna"
    assert deb.control["Version"] == "2.20.1"
    assert "postinst" in deb.scripts
    assert "opt/xilinx/xrt/share/amdxdna/dkms.conf" in {e.path for e in deb.entries}
    assert deb.compression == {
        "control": control.lstrip(".") or "none",
        "data": compression.lstrip(".") or "none",
    }


def test_multi_block_xz_reads_like_single_block_xz() -> None:
    spec = plugin(nokmod=False)
    spec.files["opt/xilinx/xrt/lib/big.so"] = bytes(range(256)) * 2000
    one = read_deb_stream(io.BytesIO(deb_bytes(spec, ".xz")), "p.deb", wants_text)
    many = read_deb_stream(io.BytesIO(deb_bytes(spec, ".xz", 16_000)), "p.deb", wants_text)
    assert many.entries == one.entries
    assert (many.control, many.scripts, many.texts) == (one.control, one.scripts, one.texts)


def test_a_damaged_block_of_a_multi_block_xz_is_an_error() -> None:
    spec = xrt_base()
    spec.files["opt/xilinx/xrt/lib/big.so"] = bytes(range(256)) * 2000
    data = bytearray(deb_bytes(spec, ".xz", 16_000))
    data[-3000] ^= 0xFF
    assert "damaged data.tar.xz" in _error(bytes(data))
    assert "truncated" in _error(bytes(data[:-3000]))


def test_size_and_digest_cover_the_whole_file() -> None:
    data = deb_bytes(xrt_base())
    deb = read_deb_stream(io.BytesIO(data), "b.deb")
    assert deb.size == len(data)
    assert deb.sha256 == hashlib.sha256(data).hexdigest()


def test_only_requested_texts_are_kept() -> None:
    deb = read_deb_stream(io.BytesIO(deb_bytes(xrt_base(leftover=True))), "b.deb", wants_text)
    assert list(deb.texts) == ["usr/src/xrt-2.20.0/driver/include/version.h"]


def _error(data: bytes) -> str:
    with pytest.raises(DebError) as caught:
        read(data)
    return caught.value.message


def test_not_an_ar_archive() -> None:
    assert _error(b"PK\x03\x04 a zip file") == "x.deb: not a .deb (no ar archive signature)"


def test_truncated_inside_a_member() -> None:
    data = deb_bytes(xrt_base())
    assert "truncated: member data.tar.xz ends after" in _error(data[:-40])


def test_missing_members() -> None:
    control = tar_bytes({"./control": xrt_base().control()}, ".gz")
    only_control = ar_archive([("debian-binary", b"2.0\n"), ("control.tar.gz", control)])
    assert _error(only_control) == "x.deb: missing member data.tar*"


def test_unknown_compression() -> None:
    data = ar_archive([("debian-binary", b"2.0\n"), ("control.tar.lz4", b"....")])
    assert _error(data) == "x.deb: control.tar.lz4: unknown compression '.lz4'"


@pytest.mark.parametrize("name", ["../etc/passwd", "./usr/../../etc/shadow", "/etc/passwd"])
def test_paths_that_leave_the_root_are_refused(name: str) -> None:
    control = tar_bytes({"./control": xrt_base().control()})
    data = tar_bytes({name: "x"})
    deb = ar_archive([("debian-binary", b"2.0\n"), ("control.tar", control), ("data.tar", data)])
    message = _error(deb)
    assert "absolute path" in message or "leaves the root" in message


def test_an_ar_size_that_lies_is_caught() -> None:
    data = bytearray(deb_bytes(xrt_base(), ""))
    # the second member header starts after the 8-byte magic, 60-byte header and 4+0 bytes
    header = 8 + 60 + 4
    size_field = slice(header + 48, header + 58)
    true_size = int(data[size_field].decode())
    data[size_field] = f"{true_size - 100:<10}".encode()
    assert "damaged" in _error(bytes(data))


@pytest.mark.parametrize("compression", [".xz", ".gz", ".zst", ".bz2"])
def test_corrupt_compressed_data(compression: str) -> None:
    good = deb_bytes(xrt_base(), compression)
    broken = bytearray(good)
    broken[len(good) - 200 : len(good) - 150] = b"\x00" * 50
    assert f"damaged data.tar{compression}" in _error(bytes(broken))


def test_debian_binary_must_come_first() -> None:
    control = tar_bytes({"./control": xrt_base().control()})
    deb = ar_archive([("control.tar", control), ("debian-binary", b"2.0\n")])
    assert "debian-binary is not the first member" in _error(deb)


SEED = deb_bytes(plugin(nokmod=False), ".gz")
PLAIN_SEED = deb_bytes(plugin(nokmod=False), "")
XZ_SEED = deb_bytes(plugin(nokmod=False), ".xz", 2_000)


@st.composite
def damaged(draw: st.DrawFn, seed: bytes, smallest_cut: int) -> bytes:
    """`seed` overwritten in up to four places, then cut short anywhere."""
    data = bytearray(seed)
    cut = st.tuples(st.integers(0, len(seed) - 1), st.binary(min_size=smallest_cut, max_size=8))
    for offset, replacement in draw(st.lists(cut, min_size=1, max_size=4)):
        data[offset : offset + len(replacement)] = replacement
    return bytes(data[: draw(st.integers(0, len(seed)))])


@pytest.mark.parametrize(
    ("seed", "smallest_cut"),
    # gzip; uncompressed, where damage reaches the tar headers themselves; multi-block xz
    [(SEED, 0), (PLAIN_SEED, 1), (XZ_SEED, 1)],
    ids=["gzip", "uncompressed", "xz-blocks"],
)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_files_raise_only_deb_error(
    seed: bytes, smallest_cut: int, data: st.DataObject
) -> None:
    with contextlib.suppress(DebError):  # any other exception fails the test
        read(data.draw(damaged(seed, smallest_cut)))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=512))
def test_random_bytes_raise_only_deb_error(data: bytes) -> None:
    with contextlib.suppress(DebError):
        read(b"!<arch>\n" + data)


def test_a_damaged_tar_header_inside_the_data_is_an_error_not_a_shorter_listing() -> None:
    data = bytearray(PLAIN_SEED)
    name = data.index(b"./opt/xilinx/xrt/share/amdxdna/dkms.conf")
    data[name + 3] ^= 0x20  # the header's checksum no longer matches
    assert "checksum mismatch" in _error(bytes(data))


def test_reading_waits_for_the_hash_only_when_it_falls_far_behind() -> None:
    gate = threading.Event()

    class SlowDigest:
        def update(self, _data: bytes) -> None:
            gate.wait()

    source = debfile._Source(io.BytesIO(bytes(1000 * 1024)))
    source.digest = SlowDigest()  # type: ignore[assignment]
    reader = threading.Thread(target=lambda: [source.read(1024) for _ in range(1000)])
    reader.start()
    reader.join(timeout=0.5)
    assert reader.is_alive()  # waiting for the hash, its memory bounded
    assert source.count <= (debfile.HASH_BEHIND + 2) * 1024
    gate.set()
    reader.join()
    assert source.count == 1000 * 1024
    source.close()


# What dpkg reads differently (tests/integration/test_audit_parity.py shows dpkg doing it)

CONTROL = xrt_base().control()
DATA = tar_entry("./", b"5", mode=0o755) + tar_entry("./usr/share/x", data=b"x") + TAR_END


@pytest.mark.parametrize("size", ["1_2", "+12", "0x1f", "1 2", ""])
def test_an_ar_size_dpkg_would_parse_differently_is_refused(size: str) -> None:
    control = control_tar(CONTROL)
    deb = ar_archive(
        [("debian-binary", b"2.0\n"), ("control.tar", control), ("data.tar", DATA)],
        sizes={"debian-binary": size},
    )
    assert "is not a number" in _error(deb)


def test_a_second_control_member_after_the_data_is_refused() -> None:
    # dpkg reads the first control.tar (Depends: dkms, a modprobe postinst); the last one
    # would have been the one judged
    first = control_tar(CONTROL + "Depends: dkms\n", postinst=b"#!/bin/sh\nmodprobe amdxdna\n")
    deb = ar_archive(
        [
            ("debian-binary", b"2.0\n"),
            ("control.tar", first),
            ("data.tar", DATA),
            ("control.tar.gz", tar_bytes({"./control": CONTROL}, ".gz")),
        ]
    )
    assert "a second control.tar member (control.tar.gz)" in _error(deb)
    second_data = ar_archive(
        [
            ("debian-binary", b"2.0\n"),
            ("control.tar", first),
            ("data.tar", DATA),
            ("data.tar", DATA),
        ]
    )
    assert "a second data.tar member" in _error(second_data)


def test_members_dpkg_skips_are_skipped_and_others_after_the_data_refused() -> None:
    control = control_tar(CONTROL)
    signed = ar_archive(
        [
            ("debian-binary", b"2.0\n"),
            ("control.tar", control),
            ("data.tar", DATA),
            ("_gpgorigin", b"sig"),
        ]
    )
    assert read_deb_stream(io.BytesIO(signed), "s.deb").package == "xrt-base"


@pytest.mark.parametrize(
    ("entry", "kind"),
    [
        (tar_entry("./postinst", b"2", link="/usr/lib/evil/go"), "symlink"),
        (tar_entry("./postinst", b"1", link="./helper"), "hardlink"),
        (tar_entry("./preinst", b"2", link="helper"), "symlink"),
        (tar_entry("./sub", b"5"), "dir"),
    ],
)
def test_a_control_member_that_is_not_a_regular_file_is_refused(entry: bytes, kind: str) -> None:
    control = (
        tar_entry("./", b"5")
        + tar_entry("./control", data=CONTROL.encode())
        + tar_entry("./helper", data=b"#!/bin/sh\nmodprobe amdxdna\n", mode=0o755)
        + entry
        + TAR_END
    )
    assert f"is a {kind}, not a regular file" in _error(hand_deb(control, DATA))


def test_a_control_file_given_twice_is_refused() -> None:
    control = (
        tar_entry("./", b"5")
        + tar_entry("./control", data=(CONTROL + "Depends: dkms\n").encode())
        + tar_entry("./control", data=CONTROL.encode())
        + TAR_END
    )
    assert "DEBIAN/control is given twice" in _error(hand_deb(control, DATA))


def test_a_maintainer_script_over_the_limit_is_refused_not_cut() -> None:
    padding = b"# " + b"x" * 100 + b"\n"
    script = b"#!/bin/sh\n" + padding * ((debfile.TEXT_LIMIT // len(padding)) + 1) + b"modprobe x\n"
    message = _error(hand_deb(control_tar(CONTROL, postinst=script), DATA))
    assert f"DEBIAN/postinst is {len(script)} bytes, over the 1 MiB" in message
    big_control = CONTROL + "X-Padding: " + "y" * debfile.TEXT_LIMIT + "\nDepends: dkms\n"
    assert "DEBIAN/control is" in _error(hand_deb(control_tar(big_control), DATA))


def test_control_bzip2_is_refused_as_dpkg_refuses_it() -> None:
    control = tar_bytes({"./control": CONTROL}, ".bz2")
    deb = ar_archive(
        [("debian-binary", b"2.0\n"), ("control.tar.bz2", control), ("data.tar", DATA)]
    )
    assert "control.tar.bz2: unknown compression" in _error(deb)


def test_control_field_names_fold_case() -> None:
    control = CONTROL.replace("Depends:", "depends:").replace("Package:", "PACKAGE:")
    deb = read_deb_stream(io.BytesIO(hand_deb(control_tar(control), DATA)), "c.deb")
    assert deb.package == "xrt-base"
    assert deb.control.get("Depends", "").startswith("ocl-icd-libopencl1")
    assert "DEPENDS" in deb.control


def test_the_names_of_all_entries_together_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(debfile, "NAMES_LIMIT", 10_000)
    data = b"".join(tar_entry(f"./usr/share/{i:080d}") for i in range(120)) + TAR_END
    assert "entry names over" in _error(hand_deb(control_tar(CONTROL), data))


def test_every_control_member_is_listed_in_the_order_of_the_tarball() -> None:
    control = control_tar(CONTROL, md5sums=b"d41d8cd98f00b204e9800998ecf8427e  x\n")
    control = control[: -len(TAR_END)] + tar_entry("./postinst", data=b"#!/bin/sh\n") + TAR_END
    deb = read_deb_stream(io.BytesIO(hand_deb(control, DATA)), "c.deb")
    assert deb.control_members == ("control", "md5sums", "postinst")
    assert deb.modules == {}


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("amdxdna", module_bytes()),  # dpkg installs it as var/lib/dpkg/info/PKG.amdxdna
        ("shlibs", gzip.compress(module_bytes())),
        ("postinst", b"#!/bin/sh\n" + module_bytes()),
        ("md5sums", b"\0" * 70_000 + module_bytes()),  # past the reader's first piece
    ],
)
def test_a_kernel_module_in_the_control_member_is_found_by_content(
    name: str, content: bytes
) -> None:
    deb = read_deb_stream(io.BytesIO(hand_deb(control_tar(CONTROL, **{name: content}), DATA)), "m")
    assert deb.modules[f"DEBIAN/{name}"].startswith("a kernel module")
    assert deb.control_members == ("control", name)


def test_a_kernel_module_in_a_compressed_control_member_is_found_by_content() -> None:
    for compression in (".gz", ".xz", ".zst"):
        control = tar_bytes(
            {"./control": CONTROL, "./triggers": "activate-noawait x\n", "./x.ko": module_bytes()},
            compression,
        )
        deb = ar_archive(
            [
                ("debian-binary", b"2.0\n"),
                (f"control.tar{compression}", control),
                ("data.tar", DATA),
            ]
        )
        contents = read_deb_stream(io.BytesIO(deb), "m")
        assert contents.modules == {"DEBIAN/x.ko": "a kernel module"}, compression
        assert contents.control_members == ("control", "triggers", "x.ko")
