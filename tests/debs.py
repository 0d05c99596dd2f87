"""Test packages: specs of XRT-like and kernel-payload packages, built as real .deb files.

`build_deb` uses `dpkg-deb --build` (integration tests); `deb_bytes` assembles the same
layout in memory with tarfile and a tiny ar writer (unit tests, fuzzing, formats dpkg-deb
no longer writes such as bzip2, and deliberately broken archives).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import shutil
import struct
import subprocess
import tarfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import zstandard

from tests.conftest import require_tool
from xdnaforge.debs import xzblocks


@dataclass
class Spec:
    package: str
    version: str = "2.20.0"
    architecture: str = "amd64"
    depends: str | None = None
    files: dict[str, str | bytes] = field(default_factory=dict)
    scripts: dict[str, str] = field(default_factory=dict)

    def control(self) -> str:
        lines = [
            f"Package: {self.package}",
            f"Version: {self.version}",
            f"Architecture: {self.architecture}",
            "Maintainer: Test <test@example.invalid>",
        ]
        if self.depends:
            lines.append(f"Depends: {self.depends}")
        lines.append("Description: test package\n synthetic")
        return "\n".join(lines) + "\n"


def xrt_base(leftover: bool = False) -> Spec:
    # like a real XRT package: its prefix and the OpenCL ICD file; `leftover`: the lone header
    # under usr/src that XRT 2.19 still installed (domain notes; 2.20 installs it for Alveo only)
    files: dict[str, str | bytes] = {
        "opt/xilinx/xrt/lib/libxrt_coreutil.so.2.20.0": b"\x7fELF core",
        "opt/xilinx/xrt/bin/unwrapped/xrt-smi": b"\x7fELF smi",
        "opt/xilinx/xrt/version.json": '{"BUILD_VERSION": "2.20.0"}\n',
        "etc/OpenCL/vendors/xilinx.icd": "libxilinxopencl.so\n",
    }
    if leftover:
        files["usr/src/xrt-2.20.0/driver/include/version.h"] = (
            '#define XRT_DRIVER_VERSION "2.20.0"\n'
        )
    return Spec(
        package="xrt-base",
        depends="ocl-icd-libopencl1 (>= 2.2.0), python3, libudev1, libboost-filesystem1.90.0",
        files=files,
    )


def xrt_npu() -> Spec:
    return Spec(
        package="xrt-npu",
        depends="xrt-base (= 2.20.0)",
        files={"opt/xilinx/xrt/lib/xrt/module/libxdp_core.so.2.20.0": b"\x7fELF xdp"},
    )


def plugin(nokmod: bool = True) -> Spec:
    spec = Spec(
        package="xrt_plugin-amdxdna",
        version="2.20.1",
        depends="xrt-base (>= 2.20)",
        files={
            "opt/xilinx/xrt/lib/libxrt_driver_xdna.so.2.20.0": b"\x7fELF shim",
            "opt/xilinx/xrt/share/amdxdna/bins/1502_00/validate.xclbin": b"xclbin",
        },
    )
    if nokmod:
        return spec
    # what the plugin carries when built without -nokmod (domain notes 1.4 and 1.5)
    spec.files.update(
        {
            "opt/xilinx/xrt/share/amdxdna/amdxdna.tar.gz": b"\x1f\x8b driver sources",
            "opt/xilinx/xrt/share/amdxdna/dkms.conf": (
                'PACKAGE_NAME=xrt-amdxdna\nPACKAGE_VERSION="2.20.0"\nAUTOINSTALL="yes"\n'
            ),
            "opt/xilinx/xrt/share/amdxdna/dkms_driver.sh": "#!/bin/sh\ndkms install xrt-amdxdna\n",
            "usr/lib/firmware/amdnpu/17f0_10/npu.dev.sbin": b"\x00firmware",
        }
    )
    spec.scripts["postinst"] = (
        "#!/bin/sh\n"
        "# no set -e, as upstream\n"
        "if [ -d /etc/dracut.conf.d ]; then\n"
        "    echo 'omit_drivers+=\" amdxdna \"' > /etc/dracut.conf.d/amdxdna.dracut.conf\n"
        "fi\n"
        "/opt/xilinx/xrt/share/amdxdna/dkms_driver.sh --install\n"
        'echo \'KERNEL=="accel*",DRIVERS=="amdxdna",MODE="0666"\' '
        "> /etc/udev/rules.d/99-amdxdna.rules\n"
        "rmmod amdxdna\n"
        "modprobe amdxdna\n"
    )
    spec.scripts["prerm"] = (
        "#!/bin/sh\n"
        "lsmod | grep -q amdxdna && rmmod amdxdna\n"
        "rm -f /etc/udev/rules.d/99-amdxdna.rules\n"
        "/opt/xilinx/xrt/share/amdxdna/dkms_driver.sh --remove\n"
    )
    return spec


def dkms_source() -> Spec:
    return Spec(
        package="amdxdna-dkms",
        architecture="all",
        depends="dkms (>= 3.0), linux-headers-generic | linux-headers-amd64",
        files={
            "usr/src/amdxdna-2.20.0/dkms.conf": (
                'PACKAGE_NAME="amdxdna"\nBUILT_MODULE_NAME[0]=amdxdna\n'
            ),
            "usr/src/amdxdna-2.20.0/Kbuild": "obj-m += amdxdna.o\n",
            "usr/src/amdxdna-2.20.0/amdxdna_pci_drv.c": (
                '#include <linux/module.h>\nMODULE_LICENSE("GPL");\n'
            ),
        },
        scripts={"postinst": "#!/bin/sh\nset -e\ndkms install amdxdna/2.20.0\n"},
    )


def firmware() -> Spec:
    return Spec(
        package="amdnpu-firmware",
        architecture="all",
        files={"lib/firmware/amdnpu/17f0_10/npu.sbin.1.1.2.64": b"\x00fw"},
    )


def kernel_image() -> Spec:
    return Spec(
        package="linux-image-7.0.0-27-generic",
        version="7.0.0-27.27",
        files={
            "boot/vmlinuz-7.0.0-27-generic": b"\x00kernel",
            "lib/modules/7.0.0-27-generic/kernel/drivers/accel/amdxdna/amdxdna.ko.zst": b"\x28mod",
            "lib/modules/7.0.0-27-generic/modules.order": "kernel/drivers/accel/amdxdna.ko\n",
        },
        scripts={"postinst": "#!/bin/sh\nset -e\ndepmod -a 7.0.0-27-generic\n"},
    )


def build_deb(directory: Path, spec: Spec, compression: str = "xz") -> Path:
    """A real .deb from `dpkg-deb --build` (compression: gzip, xz, zstd or none)."""
    require_tool("dpkg-deb")
    root = directory / f"{spec.package}-root"
    if root.exists():
        shutil.rmtree(root)
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN/control").write_text(spec.control())
    for name, text in spec.scripts.items():
        script = root / "DEBIAN" / name
        script.write_text(text)
        script.chmod(0o755)
    for path, content in spec.files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    output = directory / f"{spec.package}_{spec.version}_{spec.architecture}.{compression}.deb"
    # --nocheck: the real plugin's Package name has an underscore, which dpkg-deb refuses
    subprocess.run(
        [
            "dpkg-deb",
            "--root-owner-group",
            "--nocheck",
            f"-Z{compression}",
            "--build",
            str(root),
            str(output),
        ],
        check=True,
        capture_output=True,
    )
    return output


def ar_archive(members: list[tuple[str, bytes]], sizes: dict[str, str] | None = None) -> bytes:
    """An ar archive; `sizes` writes a member's size field as given (a hostile package's)."""
    out = io.BytesIO()
    out.write(b"!<arch>\n")
    for name, data in members:
        size = (sizes or {}).get(name, str(len(data)))
        header = f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{size:<10}`\n"
        out.write(header.encode("ascii"))
        out.write(data)
        if len(data) % 2:
            out.write(b"\n")
    return out.getvalue()


def elf_bytes(
    run_path: str | None = None, tag: str = "RUNPATH", bits: int = 64, little: bool = True
) -> bytes:
    """A minimal shared library as a linker lays it out: no sections, one PT_LOAD, a PT_DYNAMIC
    whose DT_STRTAB is an address (readers must map it through the segments)."""
    order = "<" if little else ">"
    word = "Q" if bits == 64 else "I"
    header_size, phentsize = (64, 56) if bits == 64 else (52, 32)
    strtab = b"\0" + (run_path or "").encode() + b"\0libc.so.6\0"
    strtab_at = header_size + 2 * phentsize
    dynamic_at = (strtab_at + len(strtab) + 7) // 8 * 8
    tags = [(5, strtab_at), (10, len(strtab)), (1, len(strtab) - 10)]  # STRTAB, STRSZ, NEEDED
    if run_path is not None:
        tags.append((29 if tag == "RUNPATH" else 15, 1))
    dynamic = b"".join(struct.pack(f"{order}{word}{word}", t, v) for t, v in [*tags, (0, 0)])
    total = dynamic_at + len(dynamic)
    ident = b"\x7fELF" + bytes([2 if bits == 64 else 1, 1 if little else 2, 1]) + bytes(9)
    if bits == 64:
        header = struct.pack(
            f"{order}HHIQQQIHHHHHH", 3, 62, 1, 0, header_size, 0, 0, 64, 56, 2, 64, 0, 0
        )
        load = struct.pack(f"{order}IIQQQQQQ", 1, 5, 0, 0, 0, total, total, 0x1000)
        dyn = struct.pack(
            f"{order}IIQQQQQQ",
            2,
            6,
            dynamic_at,
            dynamic_at,
            dynamic_at,
            len(dynamic),
            len(dynamic),
            8,
        )
    else:
        header = struct.pack(
            f"{order}HHIIIIIHHHHHH", 3, 40, 1, 0, header_size, 0, 0, 52, 32, 2, 40, 0, 0
        )
        load = struct.pack(f"{order}IIIIIIII", 1, 0, 0, 0, total, total, 5, 0x1000)
        dyn = struct.pack(
            f"{order}IIIIIIII",
            2,
            dynamic_at,
            dynamic_at,
            dynamic_at,
            len(dynamic),
            len(dynamic),
            6,
            4,
        )
    body = ident + header + load + dyn + strtab
    return body + bytes(dynamic_at - len(body)) + dynamic


def xz_blocks(data: bytes, block_size: int, sizes: bool = True) -> bytes:
    """An xz stream cut into blocks, as multi-threaded encoders write it (CRC32 checks).

    lzma.compress writes one block without sizes; xz -T and dpkg-deb write blocks whose headers
    carry both sizes, which is what lets a reader decode them in parallel.
    """
    flags = b"\x00\x01"  # check: CRC32
    out = [xzblocks.MAGIC + flags + struct.pack("<I", zlib.crc32(flags))]
    records = []
    filters = [{"id": lzma.FILTER_LZMA2, "dict_size": 1 << 20}]
    for start in range(0, max(len(data), 1), block_size):
        chunk = data[start : start + block_size]
        packed = lzma.compress(chunk, format=lzma.FORMAT_RAW, filters=filters)
        fields = b""
        if sizes:
            fields = xzblocks._encode_varint(len(packed)) + xzblocks._encode_varint(len(chunk))
        # one filter, LZMA2 (0x21), one property byte: dictionary 1 MiB (16)
        body = bytes([0xC0 if sizes else 0x00]) + fields + b"\x21\x01\x10"
        size = (len(body) + 1 + 4 + 3) // 4 * 4
        body = bytes([size // 4 - 1]) + body + b"\x00" * (size - 4 - 1 - len(body))
        header = body + struct.pack("<I", zlib.crc32(body))
        check = struct.pack("<I", zlib.crc32(chunk))
        out.append(header + packed + b"\x00" * (-len(packed) % 4) + check)
        records.append((len(header) + len(packed) + 4, len(chunk)))
    out.append(xzblocks._index_and_footer(records, flags))
    return b"".join(out)


def tar_bytes(
    files: dict[str, str | bytes], compression: str = "", xz_block_size: int = 0
) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for path, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o755 if path.endswith(("inst", "rm")) else 0o644
            archive.addfile(info, io.BytesIO(data))
    data = raw.getvalue()
    if compression == ".gz":
        return gzip.compress(data)
    if compression == ".xz":
        return xz_blocks(data, xz_block_size) if xz_block_size else lzma.compress(data)
    if compression == ".bz2":
        return bz2.compress(data)
    if compression == ".zst":
        compressed: bytes = zstandard.ZstdCompressor().compress(data)
        return compressed
    return data


def deb_bytes(
    spec: Spec, compression: str = ".xz", xz_block_size: int = 0, control_compression: str = ""
) -> bytes:
    """The package; the control member compressed like the data unless `control_compression`
    says otherwise, or with gzip where dpkg takes no other (bzip2, lzma: older dpkg-deb wrote
    those data members next to a gzip control member)."""
    control = {"./control": spec.control(), **{f"./{k}": v for k, v in spec.scripts.items()}}
    data = {f"./{path}": content for path, content in spec.files.items()}
    if not control_compression:
        control_compression = ".gz" if compression in (".bz2", ".lzma") else compression
    return ar_archive(
        [
            ("debian-binary", b"2.0\n"),
            (
                f"control.tar{control_compression}",
                tar_bytes(dict(control), control_compression),
            ),
            (f"data.tar{compression}", tar_bytes(data, compression, xz_block_size)),
        ]
    )


GNU_MAGIC = b"ustar  \0"  # what dpkg-deb (GNU tar) writes
TAR_END = bytes(1024)


def tar_header(
    name: str | bytes,
    type_: bytes = b"0",
    size: int = 0,
    link: str = "",
    mode: int = 0o644,
    magic: bytes = GNU_MAGIC,
) -> bytes:
    """One tar header laid out by hand, byte for byte, as a hostile package may carry it."""
    block = bytearray(512)
    raw = name.encode() if isinstance(name, str) else name
    block[0:100] = raw[:100].ljust(100, b"\0")
    block[100:108] = f"{mode:07o}\0".encode()
    block[108:124] = b"0000000\x000000000\0"
    block[124:136] = f"{size:011o}\0".encode()
    block[136:148] = b"00000000000\0"
    block[156:157] = type_
    block[157:257] = link.encode()[:100].ljust(100, b"\0")
    block[257:265] = magic
    block[148:156] = b" " * 8
    block[148:156] = f"{sum(block):06o}\0 ".encode()
    return bytes(block)


def tar_entry(
    name: str, type_: bytes = b"0", data: bytes = b"", link: str = "", mode: int = 0o644
) -> bytes:
    """A header and its data, padded to the block."""
    return tar_header(name, type_, len(data), link, mode) + data + bytes(-len(data) % 512)


def hand_deb(control: bytes, data: bytes, *, control_name: str = "control.tar") -> bytes:
    """A .deb of two hand-made uncompressed tarballs (TAR_END already appended or not)."""
    return ar_archive([("debian-binary", b"2.0\n"), (control_name, control), ("data.tar", data)])


def control_tar(control: str, **scripts: bytes) -> bytes:
    """A control tarball as dpkg-deb writes it: "./", then ./control and the scripts."""
    entries = [tar_entry("./", b"5", mode=0o755), tar_entry("./control", data=control.encode())]
    entries += [tar_entry(f"./{name}", data=text, mode=0o755) for name, text in scripts.items()]
    return b"".join(entries) + TAR_END


def module_bytes(name: str = "amdxdna") -> bytes:
    """A kernel module as modpost leaves it, reduced to what identifies one: an ELF
    relocatable (ET_REL) whose section names include .gnu.linkonce.this_module."""
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)
    header = ident + struct.pack("<HHI", 1, 62, 1) + bytes(64 - 24)
    strings = b"\0.text\0.modinfo\0.gnu.linkonce.this_module\0.symtab\0"
    modinfo = f"license=GPL\0name={name}\0vermagic=6.8.0 SMP mod_unload\0".encode()
    return header + modinfo + bytes(200) + strings


# dh_python3's prerm as Debian forky's python3-xrt 1:2.25.0-4+b1 carries it (PACKAGE: its name)
DH_PYTHON3_PRERM = "\n".join(
    [
        "#!/bin/sh",
        "set -e",
        "",
        "# Automatically added by dh_python3",
        "if command -v py3clean >/dev/null 2>&1 && python3 -c 'pass' 2>/dev/null; then",
        "\tpy3clean -p PACKAGE:amd64 ",
        "else",
        "\tdpkg -L PACKAGE:amd64 | sed -En -e "
        + r"""'/^(.*)\/(.+)\.py$/s,,rm "\1/__pycache__/\2".*,e'""",
        "\tfind /usr/lib/python3/dist-packages/ -type d -name __pycache__ -empty -print0 "
        "| xargs --null --no-run-if-empty rmdir",
        "fi",
        "",
        "# End automatically added section",
        "",
    ]
)
