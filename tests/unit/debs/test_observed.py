"""The observation read from the observing script's listing, and what of it lies outside the
admitted paths: the parser, dpkg's own files left out, intact stand-ins left out, a cut
listing, "not run", and the judgement of directories and removals."""

from __future__ import annotations

from xdnaforge.debs.observed import (
    EXCLUDED,
    TRUNCATED,
    Change,
    Observation,
    describe,
    excluded,
    outside,
    parse,
    records,
)


def listing(*pairs: tuple[str, str], end: bool = True) -> str:
    text = "".join(f"{tag}\0{value}\0" for tag, value in pairs)
    return text + ("end\0\0" if end else "")


SKELETON = (("<d 1777 ", "tmp"), ("<l 777 usr/bin", "bin"), ("<d 755 ", "usr"))
AFTER = ((">d 1777 ", "tmp"), (">l 777 usr/bin", "bin"), (">d 755 ", "usr"))


def observed(*pairs: tuple[str, str], calls: str = "") -> Observation:
    return parse(listing(("status", "0"), ("tail", "Setting up x ..."), *pairs), calls)


def test_the_changes_of_the_upper_layers_are_read_with_their_kinds() -> None:
    observation = observed(
        *SKELETON,
        *AFTER,
        ("+f", "opt/xilinx/xrt/lib/libx.so.2"),
        ("+l", "opt/xilinx/xrt/lib/libx.so"),
        ("+d", "opt/xilinx"),
        ("+c", "opt/dev"),
        ("+o", "opt/fifo"),
        ("-", "etc/hostname"),
    )
    assert observation.status == "observed"
    assert observation.reason == ""
    assert observation.dpkg_status == 0
    assert observation.dpkg_tail == "Setting up x ..."
    assert observation.changes == (
        Change("etc/hostname", "removed"),
        Change("opt/dev", "device"),
        Change("opt/fifo", "other"),
        Change("opt/xilinx", "dir"),
        Change("opt/xilinx/xrt/lib/libx.so", "symlink"),
        Change("opt/xilinx/xrt/lib/libx.so.2", "file"),
    )


def test_the_call_log_gives_one_tool_call_a_line() -> None:
    observation = observed(calls="modprobe amdxdna\nmodprobe -r amdxdna\n\nupdate-initramfs \n")
    assert observation.tool_calls == ("modprobe amdxdna", "modprobe -r amdxdna", "update-initramfs")


def test_what_dpkg_keeps_for_every_package_is_left_out() -> None:
    kept = (
        "var/lib/dpkg",
        "var/lib/dpkg/status",
        "var/lib/dpkg/info/xrt-base.postinst",
        "var/lib/dpkg/triggers/Lock",
        "var/log/dpkg.log",
        "var/log/alternatives.log",
        "var/cache/debconf/config.dat",
        "etc/ld.so.cache",
        "var/cache/ldconfig/aux-cache",
        "var/cache/man/index.db",
    )
    observation = observed(*(("+f", path) for path in kept), ("+f", "var/lib/dpkgx"))
    assert observation.changes == (Change("var/lib/dpkgx", "file"),)


def test_every_exclusion_says_why() -> None:
    for pattern, why in EXCLUDED:
        assert why, pattern
        assert excluded(pattern.removesuffix("/**")) == why
    assert excluded("etc/ld.so.cache.d") is None
    assert excluded("etc/modprobe.d/x.conf") is None


def test_an_intact_stand_in_is_left_out_and_an_overwritten_one_is_a_change() -> None:
    observation = observed(
        ("standin", "usr/sbin/modprobe"),
        ("+f", "usr/sbin/modprobe"),
        ("+f", "usr/sbin/depmod"),  # not reported intact: a script replaced it
    )
    assert observation.changes == (Change("usr/sbin/depmod", "file"),)


def test_the_roots_own_tree_is_compared_before_and_after() -> None:
    observation = observed(
        *SKELETON,
        (">d 1777 ", "tmp"),
        (">d 755 ", "tmp/x"),
        (">f 755 ", "tmp/x/ldconfig"),
        (">l 777 /opt/elsewhere", "bin"),  # a top-level link pointed elsewhere
        (">f 644 ", "evil"),  # a new top-level file
        # usr is gone from the tree: removed
    )
    assert observation.changes == (
        Change("bin", "symlink"),
        Change("evil", "file"),
        Change("tmp/x", "dir"),
        Change("tmp/x/ldconfig", "file"),
        Change("usr", "removed"),
    )


def test_a_directory_seen_twice_is_one_change() -> None:
    observation = observed(*SKELETON, (">d 700 ", "usr"), (">d 1777 ", "tmp"), ("+d", "usr"))
    assert observation.changes == (Change("bin", "removed"), Change("usr", "dir"))


def test_a_dpkg_stopped_at_its_limit_is_observed_without_a_status() -> None:
    text = listing(("status", "timeout"), ("tail", "Setting up x ..."))
    observation = parse(text, "modprobe amdxdna\n", dpkg_seconds=240)
    assert observation.status == "observed"
    assert observation.dpkg_status is None
    assert observation.dpkg_tail == (
        "Setting up x ...\n(dpkg did not finish and was stopped after 240 s)"
    )
    assert observation.tool_calls == ("modprobe amdxdna",)
    assert describe(observation).startswith("observed: dpkg stopped at its time limit")


def test_a_failed_dpkg_is_observed_with_its_status() -> None:
    observation = parse(listing(("status", "1"), ("tail", "dpkg: error processing")), "")
    assert observation.dpkg_status == 1
    assert describe(observation) == (
        "observed: dpkg exit status 1, 0 module tool calls, 0 changes left in the root"
    )


def test_a_cut_listing_ends_in_the_truncated_change() -> None:
    body = listing(("status", "0"), ("tail", ""), ("+f", "opt/a"), ("+f", "opt/b"), end=False)
    cut = body[: body.index("opt/b") + 3]  # the last record is cut inside its path
    text = f"truncated\0{len(body) * 10}\0" + cut + "\0" + "end\0\0"
    observation = parse(text, "")
    assert observation.status == "observed"
    assert observation.changes == (
        Change("opt", "file"),  # what was left of opt/b
        Change("opt/a", "file"),
        Change(TRUNCATED, "other"),
    )


def test_a_record_shifted_by_a_cut_is_skipped_until_a_tag() -> None:
    pairs = list(records("+f\0opt/a\0+\0end\0\0"))
    assert pairs == [("+f", "opt/a"), ("end", "")]


def test_the_roots_refusal_is_not_run_with_its_reason() -> None:
    text = listing(
        ("not-run", "copy-up"),
        ("detail", "observe: 46: cannot create /mnt/r/var/lib/dpkg/status: Permission denied\n"),
    )
    observation = parse(text, "")
    assert observation.status == "not run"
    assert observation.reason.startswith("needs root: ")
    assert observation.reason.endswith("/mnt/r/var/lib/dpkg/status: Permission denied")
    assert observation.changes == ()
    assert observation.dpkg_status is None
    assert describe(observation).startswith("not run: needs root")


def test_an_unknown_refusal_is_not_run_with_its_code() -> None:
    observation = parse(listing(("not-run", "weird"), ("detail", "")), "")
    assert observation.reason == "the observation stopped (weird)"


def test_a_listing_without_its_end_is_not_run() -> None:
    text = listing(("status", "0"), ("tail", ""), ("+f", "etc/modprobe.d/x.conf"), end=False)
    observation = parse(text, "modprobe amdxdna\n")
    assert observation.status == "not run"
    assert observation.reason == "the sandbox stopped before its listing was complete"
    assert observation.tool_calls == ()
    assert observation.changes == ()


def admitted(path: str) -> bool:
    return path.startswith("opt/xilinx/xrt/")


def test_outside_keeps_what_is_not_admitted() -> None:
    observation = observed(
        ("+f", "opt/xilinx/xrt/lib/libx.so.2"),
        ("+f", "etc/modprobe.d/x.conf"),
        ("+l", "etc/alternatives/x"),
    )
    assert outside(observation, admitted) == (
        Change("etc/alternatives/x", "symlink"),
        Change("etc/modprobe.d/x.conf", "file"),
    )


def test_a_directory_counts_only_when_nothing_admitted_is_below_it() -> None:
    observation = observed(
        ("+d", "opt"),
        ("+d", "opt/xilinx"),
        ("+d", "opt/xilinx/xrt"),
        ("+f", "opt/xilinx/xrt/lib/libx.so.2"),
        ("+d", "opt/other"),
        ("+d", "etc/modprobe.d"),
        ("+f", "etc/modprobe.d/x.conf"),
    )
    assert outside(observation, admitted) == (
        Change("etc/modprobe.d", "dir"),
        Change("etc/modprobe.d/x.conf", "file"),
        Change("opt/other", "dir"),
    )


def test_a_directory_admitted_itself_does_not_count() -> None:
    observation = observed(("+d", "opt/xilinx/xrt/empty"))
    assert outside(observation, admitted) == ()


def test_removals_and_a_cut_listing_always_count() -> None:
    observation = Observation(
        status="observed",
        reason="",
        dpkg_status=0,
        dpkg_tail="",
        tool_calls=(),
        changes=(
            Change("opt/xilinx/xrt/lib/old.so", "removed"),
            Change("etc/hostname", "removed"),
            Change(TRUNCATED, "other"),
        ),
    )
    assert outside(observation, lambda _: True) == observation.changes


def test_outside_asks_about_each_path_once() -> None:
    asked: list[str] = []

    def recording(path: str) -> bool:
        asked.append(path)
        return path.endswith(".so")

    observation = observed(("+d", "opt"), ("+f", "opt/a.so"), ("+f", "opt/b.conf"))
    assert outside(observation, recording) == (Change("opt/b.conf", "file"),)
    assert sorted(asked) == ["opt", "opt/a.so", "opt/b.conf"]


def test_not_run_has_nothing_outside() -> None:
    observation = parse(listing(("not-run", "overlay"), ("detail", "/usr: ")), "")
    assert outside(observation, lambda _: False) == ()
