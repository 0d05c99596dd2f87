"""The audit reads what dpkg installs: hostile packages dpkg takes are refused, shown with the
real dpkg installing them into a throw-away root (maintainer scripts chrooted, against
stand-in module tools), and a differential test against dpkg-deb over a fuzz corpus."""

from __future__ import annotations

import codecs
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.debs import (
    TAR_END,
    Spec,
    ar_archive,
    build_deb,
    control_tar,
    deb_bytes,
    hand_deb,
    tar_bytes,
    tar_entry,
    tar_header,
    xrt_base,
)
from xdnaforge.debs.control import parse as parse_control
from xdnaforge.debs.debfile import MAINTAINER_SCRIPTS, DebError, read_deb
from xdnaforge.debs.rules import audit, wants_text

pytestmark = pytest.mark.tools("dpkg", "dpkg-deb")

CONTROL = (
    "Package: evil\nVersion: 1\nArchitecture: all\nMaintainer: x <x@y.invalid>\nDescription: x\n"
)
MODPROBE = b"#!/bin/sh\nmodprobe amdxdna\n"
MODULE_TOOLS = ("modprobe", "insmod", "rmmod", "depmod", "dkms", "update-initramfs")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="dpkg --root needs root")


def _libraries(program: str) -> list[Path]:
    done = subprocess.run(["ldd", program], capture_output=True, text=True, check=True)
    found = []
    for line in done.stdout.splitlines():
        path = line.split("=>")[-1].split("(")[0].strip()
        if path.startswith("/"):
            found.append(Path(path))
    return found


def dpkg_root(directory: Path) -> Path:
    """A root dpkg can install into and run maintainer scripts in (chrooted): /bin/sh and
    stand-ins for the module tools that only write down how they were called."""
    root = directory / "root"
    for folder in ("var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers"):
        (root / folder).mkdir(parents=True)
    for folder in ("var/log", "tmp", "bin", "sbin", "usr/bin", "usr/sbin"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "var/lib/dpkg/status").write_text("")
    shell = str(Path(shutil.which("dash") or "/bin/sh").resolve())
    for library in _libraries(shell):
        target = root / library.relative_to("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(library, target)
    shutil.copy(shell, root / "bin/sh")
    for tool in MODULE_TOOLS:
        for folder in ("sbin", "usr/sbin"):
            stand_in = root / folder / tool
            stand_in.write_text(f'#!/bin/sh\necho "{tool} $*" >> /tmp/module-tools\n')
            stand_in.chmod(0o755)
    return root


def dpkg_install(root: Path, deb: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        # --root moves the database, not the log: without --log it is the host's
        ["dpkg", f"--root={root}", f"--log={root}/var/log/dpkg.log", *extra, "-i", str(deb)],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        timeout=60,
        check=False,
    )


def module_tools_run(root: Path) -> list[str]:
    log = root / "tmp/module-tools"
    return log.read_text().splitlines() if log.exists() else []


def refused(deb: Path) -> str:
    with pytest.raises(DebError) as caught:
        read_deb(deb, wants_text)
    return caught.value.message


def write(directory: Path, name: str, data: bytes) -> Path:
    path = directory / name
    path.write_bytes(data)
    return path


# ---- what dpkg installs or runs, and the audit refuses ----


def nul_type_directory_decoy() -> bytes:
    """ "./usr/" of tar type NUL: dpkg and tar skip its data; that data is a decoy header whose
    size would swallow the module for a reader that took the entry for a data-less directory."""
    module = (
        tar_entry("./lib/", b"5")
        + tar_entry("./lib/modules/", b"5")
        + tar_entry("./lib/modules/amdxdna.ko", data=b"\x7fELF module")
    )
    decoy = tar_header("./usr/share/decoy", b"0", len(module))
    data = tar_entry("./", b"5") + tar_header("./usr/", b"\0", 512) + decoy + module + TAR_END
    return hand_deb(control_tar(CONTROL), data)


@needs_root
def test_a_nul_type_directory_cannot_hide_a_module_dpkg_installs(tmp_path: Path) -> None:
    deb = write(tmp_path, "decoy.deb", nul_type_directory_decoy())
    listing = subprocess.run(
        ["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True
    ).stdout
    assert "./lib/modules/amdxdna.ko" in listing
    root = dpkg_root(tmp_path)
    assert dpkg_install(root, deb).returncode == 0
    assert (root / "lib/modules/amdxdna.ko").read_bytes() == b"\x7fELF module"
    assert "a regular file named './usr/'" in refused(deb)


@needs_root
def test_dpkg_reads_the_first_control_member_so_a_second_one_is_refused(tmp_path: Path) -> None:
    first = control_tar(CONTROL + "Depends: dkms\n", postinst=MODPROBE)
    data = tar_entry("./", b"5") + TAR_END
    deb = write(
        tmp_path,
        "two-controls.deb",
        ar_archive(
            [
                ("debian-binary", b"2.0\n"),
                ("control.tar", first),
                ("data.tar", data),
                ("control.tar", control_tar(CONTROL)),
            ]
        ),
    )
    fields = subprocess.run(["dpkg-deb", "-f", str(deb), "Depends"], capture_output=True, text=True)
    assert fields.stdout.strip() == "dkms"
    root = dpkg_root(tmp_path)
    assert "depends on dkms" in dpkg_install(root, deb).stdout + dpkg_install(root, deb).stderr
    assert dpkg_install(root, deb, "--force-depends").returncode == 0
    assert module_tools_run(root) == ["modprobe amdxdna"]
    assert "a second control.tar member" in refused(deb)


@needs_root
@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_maintainer_script_that_is_a_link_is_refused_as_dpkg_runs_it(
    tmp_path: Path, link: str
) -> None:
    if link == "symlink":  # plain dpkg-deb --build takes it
        tree = tmp_path / "tree"
        (tree / "DEBIAN").mkdir(parents=True)
        (tree / "DEBIAN/control").write_text(CONTROL)
        for helper in ("helper", "evil.helper"):  # the link resolves in dpkg's tmp.ci and info/
            (tree / "DEBIAN" / helper).write_bytes(MODPROBE)
            (tree / "DEBIAN" / helper).chmod(0o755)
        (tree / "DEBIAN/postinst").symlink_to("evil.helper")
        deb = tmp_path / "link.deb"
        subprocess.run(
            ["dpkg-deb", "--root-owner-group", "--build", str(tree), str(deb)],
            check=True,
            capture_output=True,
        )
    else:
        control = (
            tar_entry("./", b"5")
            + tar_entry("./control", data=CONTROL.encode())
            + tar_entry("./helper", data=MODPROBE, mode=0o755)
            + tar_entry("./postinst", b"1", link="./helper")
            + TAR_END
        )
        deb = write(tmp_path, "link.deb", hand_deb(control, tar_entry("./", b"5") + TAR_END))
    root = dpkg_root(tmp_path)
    assert dpkg_install(root, deb).returncode == 0
    assert module_tools_run(root) == ["modprobe amdxdna"]
    assert f"DEBIAN/postinst is a {link}, not a regular file" in refused(deb)


@needs_root
def test_control_fields_dpkg_enforces_whatever_their_case_are_judged(tmp_path: Path) -> None:
    spec = Spec(package="folded", depends="dkms")
    deb = build_deb(tmp_path, spec, "gzip")
    folded = tmp_path / "folded.deb"
    tree = tmp_path / "folded-tree"
    subprocess.run(["dpkg-deb", "-R", str(deb), str(tree)], check=True)
    control = tree / "DEBIAN/control"
    control.write_text(control.read_text().replace("Depends:", "depends:"))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(tree), str(folded)], check=True)
    root = dpkg_root(tmp_path)
    outcome = dpkg_install(root, folded)
    assert "depends on dkms" in outcome.stderr + outcome.stdout
    assert {f.rule for f in audit(read_deb(folded, wants_text)).findings} == {"DEP-001"}


@needs_root
def test_a_maintainer_script_past_the_read_limit_is_refused_as_dpkg_runs_it_whole(
    tmp_path: Path,
) -> None:
    comment = b"# " + b"x" * 1000 + b"\n"
    script = b"#!/bin/sh\n" + comment * 1100 + b"modprobe amdxdna\n"  # 1.1 MB
    spec = Spec(package="long-script", scripts={"postinst": script.decode()})
    deb = build_deb(tmp_path, spec, "xz")
    root = dpkg_root(tmp_path)
    assert dpkg_install(root, deb).returncode == 0
    assert module_tools_run(root) == ["modprobe amdxdna"]
    assert "DEBIAN/postinst is 1" in refused(deb)


@pytest.mark.parametrize(
    ("name", "dpkg_says", "we_say"),
    [
        ("ar-size", "invalid character '_'", "is not a number"),
        ("pax", "", "pax header"),  # dpkg-deb -c's GNU tar takes it; dpkg --unpack does not
        ("control-bz2", "unknown compression", "unknown compression"),
    ],
)
def test_what_dpkg_refuses_is_refused(
    tmp_path: Path, name: str, dpkg_says: str, we_say: str
) -> None:
    data = tar_entry("./", b"5") + TAR_END
    if name == "ar-size":
        control = control_tar(CONTROL)
        sizes = {"control.tar": "_".join(str(len(control)))}
        raw = ar_archive(
            [("debian-binary", b"2.0\n"), ("control.tar", control), ("data.tar", data)], sizes
        )
    elif name == "pax":
        record = b"path=./lib/modules/x.ko\n"
        record = f"{len(record) + 3} ".encode() + record
        hidden = tar_entry("./PaxHeaders/x", b"x", record) + tar_entry("./usr/harmless", data=b"hi")
        raw = hand_deb(control_tar(CONTROL), tar_entry("./", b"5") + hidden + TAR_END)
    else:
        control = tar_bytes({"./control": CONTROL}, ".bz2")
        raw = ar_archive(
            [("debian-binary", b"2.0\n"), ("control.tar.bz2", control), ("data.tar", data)]
        )
    deb = write(tmp_path, f"{name}.deb", raw)
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True)
    if dpkg_says:
        assert listing.returncode != 0
        assert dpkg_says in listing.stderr
    else:
        assert "./lib/modules/x.ko" in listing.stdout  # what the audit would have judged
        if os.geteuid() == 0:
            outcome = dpkg_install(dpkg_root(tmp_path), deb)
            assert "unsupported PAX tar header" in outcome.stderr
    assert we_say in refused(deb)


# ---- the differential test: whatever the audit accepts, dpkg-deb reads the same way ----


def _dpkg_reading(deb: Path, scratch: Path) -> tuple[list[str], str, dict[str, bytes]] | None:
    """What dpkg-deb reads: the data listing (its tar), the control fields, the control files;
    None when it refuses the package."""
    fsys = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, timeout=60)
    if fsys.returncode != 0:
        return None
    listing = subprocess.run(
        ["tar", "-t", "--quoting-style=escape"],
        input=fsys.stdout,
        capture_output=True,
        timeout=60,
        env={**os.environ, "LC_ALL": "C"},
    )
    info = subprocess.run(["dpkg-deb", "-f", str(deb)], capture_output=True, timeout=60)
    shutil.rmtree(scratch, ignore_errors=True)
    control = subprocess.run(["dpkg-deb", "-e", str(deb), str(scratch)], capture_output=True)
    if listing.returncode != 0 or info.returncode != 0 or control.returncode != 0:
        return None
    names = []
    for escaped in listing.stdout.splitlines():
        line = codecs.escape_decode(escaped)[0].decode("utf-8", "surrogateescape")
        name = "/".join(p for p in line.split("/") if p not in ("", "."))
        if name:
            names.append(name)
    files = {p.name: p.read_bytes() for p in scratch.iterdir() if p.is_file()}
    return names, info.stdout.decode("utf-8", "replace"), files


FIELDS = {  # header fields a hostile package would play with, and values worth trying
    "name": (0, 100, [b"./usr/", b"./usr/share/x/", b"", b"./lib/modules/m.ko", b"a" * 100]),
    "mode": (100, 8, [b"0000755\0", b"7777777\0", b"\0" * 8]),
    "size": (
        124,
        12,
        [
            b"00000001000\0",
            b"0000000_001\0",
            b" 0000000001 ",
            b"\x80" + bytes(10) + b"\x05",
            b"00000000000\0",
            b"77777777777\0",
            b"00000002000\0",
        ],
    ),
    "type": (156, 1, [b"0", b"\0", b"1", b"2", b"5", b"7", b"x", b"g", b"L", b"K", b"S", b"3"]),
    "link": (157, 100, [b"", b"../../etc/x", b"./usr/share/x"]),
    "magic": (257, 8, [b"ustar  \0", b"ustar\x0000", bytes(8), b"ustar\x00xx", b"GNUtar \0"]),
    "prefix": (345, 155, [b"", b"./lib/modules"]),
}


def _mutate(seed: bytes, rng: random.Random) -> bytes:
    """A header of the data tarball with a field changed and its checksum made right again."""
    data = bytearray(seed)
    headers = [i for i in range(0, len(data) - 512, 512) if data[i + 257 : i + 262] == b"ustar"]
    for _ in range(rng.randint(1, 2)):
        at = rng.choice(headers)
        offset, length, values = FIELDS[rng.choice(sorted(FIELDS))]
        value = rng.choice(values)
        data[at + offset : at + offset + length] = value[:length].ljust(length, b"\0")
        data[at + 148 : at + 156] = b" " * 8
        data[at + 148 : at + 156] = f"{sum(data[at : at + 512]):06o}\0 ".encode()
    return bytes(data)


def _seed() -> tuple[bytes, bytes]:
    spec = xrt_base()
    spec.files["usr/share/doc/xrt/" + "long-" * 25 + "name.txt"] = "a long name\n"
    spec.files["usr/share/x/y"] = b"\x00" * 700
    data = {f"./{path}": content for path, content in spec.files.items()}
    return control_tar(spec.control(), postinst=b"#!/bin/sh\nldconfig\n"), tar_bytes(data)


def test_whatever_the_audit_reads_dpkg_deb_reads_the_same_way(tmp_path: Path) -> None:
    require_tool("dpkg-deb")
    control, data = _seed()
    rng = random.Random(int(os.environ.get("XDNAFORGE_PARITY_SEED", "22")))  # try others
    agreed = refused_by_both = refused_by_us_only = 0
    corpus = [deb_bytes(xrt_base(), c) for c in (".gz", ".xz", ".zst", "")]
    corpus += [hand_deb(control, _mutate(data, rng)) for _ in range(120)]
    corpus += [hand_deb(_mutate(control, rng), data) for _ in range(30)]
    for number, raw in enumerate(corpus):
        deb = write(tmp_path, f"fuzz-{number}.deb", raw)
        theirs = _dpkg_reading(deb, tmp_path / "control")
        try:
            ours = read_deb(deb, wants_text)
        except DebError:
            refused_by_both += theirs is None
            refused_by_us_only += theirs is not None
            continue
        assert theirs is not None, f"accepted what dpkg-deb refuses: {deb}"
        names, fields, files = theirs
        assert [e.path for e in ours.entries] == names, deb
        assert dict(ours.control) == parse_control(fields), deb
        assert {name: text.encode() for name, text in ours.scripts.items()} == {
            name: content for name, content in files.items() if name in MAINTAINER_SCRIPTS
        }, deb
        agreed += 1
    print(
        f"parity: {agreed} read alike, {refused_by_both} refused by both, "
        f"{refused_by_us_only} refused by the audit only"
    )
    assert agreed >= 20
    assert refused_by_both >= 10
