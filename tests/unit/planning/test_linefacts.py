"""planning/linefacts.py: a line's own XRT version, every blob it was released with, the ids
its driver binds."""

from __future__ import annotations

import json

from xdnaforge.planning import linefacts


def test_the_lines_own_xrt_version_is_info_jsons() -> None:
    assert linefacts.line_xrt_version(json.dumps({"xrt": {"version": "202620.2.25.37"}})) == (
        "2.25.37"
    )
    assert linefacts.line_xrt_version("not json") is None
    assert linefacts.line_xrt_version(json.dumps({"xrt": {}})) is None


def test_whence_names_every_blob_certificates_included_and_wins_over_info() -> None:
    whence = (
        "Link: amdnpu/17f1_10/npu.dev.sbin -> 1.9_npu.sbin.2.14.0.114\n"
        "Link: amdnpu/17f1_10/cert.dev.sbin -> 1.9_cert.sbin.1.8.0.46\n"
        "Link: amdnpu/17f2_10/npu.dev.sbin -> ../17f1_10/1.9_npu.sbin.2.14.0.114\n"
    )
    info = json.dumps(
        {
            "firmwares": [
                {
                    "pci_device_id": "17f1",
                    "pci_revision_id": "10",
                    "fw_name": "cert.dev.sbin",
                    "version": "1.5.0.39",
                }
            ]
        }
    )
    assert linefacts.released_blobs(whence, info) == {
        "17f1_10/npu.dev.sbin": "2.14.0.114",
        "17f1_10/cert.dev.sbin": "1.8.0.46",
        "17f2_10/npu.dev.sbin": "2.14.0.114",
    }
    # 1.8: no WHENCE, the certificate is in info.json's list
    assert linefacts.released_blobs(None, info) == {"17f1_10/cert.dev.sbin": "1.5.0.39"}


def test_the_bound_ids_and_their_changes() -> None:
    old = linefacts.bound_devices("{ 0x17f0, 0x0,  &dev_npu2_info },\n{ 0x1B0A, 0x00, &x },")
    new = linefacts.bound_devices("{ 0x17f2, 0x11,  &dev_npu7_pf_info },\n{ 0x1b0a, 0x0, &x },")
    assert old == ("1022:17f0 rev 0x00", "1022:1b0a rev 0x00")
    changes = linefacts.device_changes(old, new, lambda d: d != "1022:17f2 rev 0x11")
    assert changes == [
        "the driver now binds 1022:17f2 rev 0x11; not in xdnaforge's host facts: "
        "1022:17f2 rev 0x11",
        "the driver no longer binds 1022:17f0 rev 0x00",
    ]
