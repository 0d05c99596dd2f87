"""A small synthetic upstream built with GitPython: "xdna-driver" with an `xrt` submodule that
has its own nested submodule (`src/aiebu`) and one the build does not need (`src/libqdma`).

Submodules are recorded as gitlinks + .gitmodules directly, so building the upstream needs
no clone and no network; recipes point at it through file:// URLs or site mirrors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import git

from tests.conftest import require_tool

IDENTITY = {
    "GIT_AUTHOR_NAME": "Upstream",
    "GIT_AUTHOR_EMAIL": "upstream@example.invalid",
    "GIT_COMMITTER_NAME": "Upstream",
    "GIT_COMMITTER_EMAIL": "upstream@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}

BOOST_CMAKE = """# boost lookup
if(CMAKE_VERSION VERSION_GREATER "3.29")
  find_package(Boost CONFIG
    REQUIRED COMPONENTS system filesystem program_options)
endif()
set(Boost_USE_MULTITHREADED ON)
"""


@dataclass
class Upstream:
    root: Path
    urls: dict[str, str] = field(default_factory=dict)
    heads: dict[str, str] = field(default_factory=dict)

    def repo(self, name: str) -> git.Repo:
        repo = git.Repo(self.root / name)
        repo.git.update_environment(**IDENTITY)
        return repo

    def commit(self, name: str, files: dict[str, str], message: str) -> str:
        """Write files into repository `name` and commit them; returns the new commit."""
        repo = self.repo(name)
        for path, text in files.items():
            target = self.root / name / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            if path.endswith(".sh"):
                target.chmod(0o755)
        # only these files: `add --all` would drop gitlinks, whose directories do not exist here
        repo.git.add("--", *files)
        repo.git.commit("--quiet", "-m", message)
        sha: str = repo.head.commit.hexsha
        self.heads[name] = sha
        return sha

    def link(self, parent: str, path: str, child: str, commit: str | None = None) -> str:
        """Record `child` at `commit` (default: its head) as submodule `path` of `parent`."""
        repo = self.repo(parent)
        sha = commit or self.heads[child]
        modules = self.root / parent / ".gitmodules"
        text = modules.read_text() if modules.exists() else ""
        if f'"{path}"' not in text:
            text += f'[submodule "{path}"]\n\tpath = {path}\n\turl = {self.urls[child]}\n'
            modules.write_text(text)
        repo.git.update_index("--add", "--cacheinfo", f"160000,{sha},{path}")
        repo.git.add(".gitmodules")
        repo.git.commit("--quiet", "-m", f"update {path} to {sha[:8]}")
        head: str = repo.head.commit.hexsha
        self.heads[parent] = head
        return head


# XRT's build/build.sh, in miniature: the real option names, cd to its own directory,
# configure (skipped by -nocmake), "compile", ctest (skipped by -noctest), then packaging
# with dpkg-deb into Release/. Marker files make test conditions: ../SLOW_BUILD sleeps (to
# be interrupted or killed), ../FAIL_TEST fails a test, ../HOST_PATHS leaks the build tree
# into a .pc file, ../RUNTIME_TWINS adds XRT 2.19's two files with Package xrt-runtime.
# set -e stops packaging when ctest fails.
XRT_BUILD_SH = r"""#!/bin/bash
set -e
cd "$(dirname "$0")"
noinit=0; noctest=0; nocmake=0; jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    -npu|-opt|-ccache) ;;
    -noinit) noinit=1 ;;
    -noctest) noctest=1 ;;
    -nocmake) nocmake=1 ;;
    -disable-werror|--disable-werror) ;;
    -j) shift; jobs=$1 ;;
    *) echo "unknown option $1"; exit 1 ;;
  esac
  shift
done
if [ "$noinit" = 0 ]; then echo "git submodule update --init --recursive"; exit 5; fi
mkdir -p Release
if [ "$nocmake" = 0 ]; then
  echo "-- Configuring done"
  echo "-- Build files have been written to: $PWD/Release"
  echo configure >> Release/configure-count
fi
echo "[ 50%] Building CXX object with -j $jobs"
echo compile >> Release/compile-count
if [ -f ../SLOW_BUILD ]; then
  echo "slow compile unit"
  # ../IGNORE_TERM: a step that ignores SIGTERM (only SIGKILL stops it)
  [ -f ../IGNORE_TERM ] && trap '' TERM
  # a compiler job that leaves the process group and the session, as make's jobs may: only a
  # PID namespace holds it. Its command line carries "slow-unit <this tree>" for the tests
  setsid sh -c 'trap "" TERM; for _ in $(seq 300); do sleep 0.2; done' "slow-unit $PWD" \
    </dev/null >/dev/null 2>&1 &
  # short sleeps, so that a signal is acted on at once
  for _ in $(seq 600); do sleep 0.1; done
fi
if [ "$noctest" = 0 ]; then
  echo "Test project $PWD/Release"
  if [ -f ../FAIL_TEST ]; then
    echo "    1/3 Test #1: xrt-smi ...........   Passed    0.01 sec"
    echo "    2/3 Test #2: [xclbinutil]:xclbintest ...***Failed    0.02 sec"
    echo "67% tests passed, 1 tests failed out of 3"
    echo ""
    echo "The following tests FAILED:"
    echo "	  2 - [xclbinutil]:xclbintest (Failed)"
    echo "Errors while running CTest"
    exit 8
  fi
  echo "    1/3 Test #1: xrt-smi ...........   Passed    0.01 sec"
  echo "    2/3 Test #2: [xclbinutil]:xclbintest ...   Passed    0.02 sec"
  echo "    3/3 Test #3: aie2_basic_txn ...***Skipped   0.00 sec"
  echo ""
  echo "100% tests passed, 0 tests failed out of 3"
  echo ""
  echo "The following tests did not run:"
  echo "	  3 - aie2_basic_txn (Skipped)"
fi
if [ -f ../FAIL_PACKAGE ]; then echo "CPack Error: packaging failed"; exit 2; fi
version=$(sed -n 's/^VERSION //p' ../src/CMake/settings.cmake).0
for component in base npu; do
  root=$PWD/Release/pkg-$component
  rm -rf "$root"; mkdir -p "$root/DEBIAN" "$root/opt/xilinx/xrt/lib"
  depends=""
  [ "$component" = npu ] && depends="Depends: xrt-base (= $version)"
  printf 'Package: xrt-%s\nVersion: %s\nArchitecture: amd64\nMaintainer: x <x@example.invalid>\n%s\nDescription: xrt %s\n' \
    "$component" "$version" "$depends" "$component" | grep -v '^$' > "$root/DEBIAN/control"
  cp ../src/CMake/boostUtil.cmake "$root/opt/xilinx/xrt/lib/build-config-$component.txt"
  if [ -f ../HOST_PATHS ]; then  # a careless install step: the staging root leaks into a .pc
    mkdir -p "$root/opt/xilinx/xrt/lib/pkgconfig"
    printf 'prefix=%s\nLibs: -L${prefix}/lib\n' "$root/opt/xilinx/xrt" > "$root/opt/xilinx/xrt/lib/pkgconfig/xrt.pc"
  fi
  dpkg-deb --root-owner-group -Zgzip --build "$root" "Release/xrt_202520.${version}_26.04-amd64-$component.deb" >/dev/null
done
if [ -f ../RUNTIME_TWINS ]; then
  # XRT 2.19 -npu on Debian: aiebu's xrt_*-Runtime.deb and aie-rt's xrt_*-runtime.deb both
  # carry Package xrt-runtime
  for component in Runtime runtime; do
    root=$PWD/Release/pkg-$component
    rm -rf "$root"; mkdir -p "$root/DEBIAN" "$root/opt/xilinx/xrt/share/$component"
    printf 'Package: xrt-runtime\nVersion: %s\nArchitecture: amd64\nMaintainer: x <x@example.invalid>\nDescription: %s\n' \
      "$version" "$component" > "$root/DEBIAN/control"
    echo "$component" > "$root/opt/xilinx/xrt/share/$component/which.txt"
    dpkg-deb --root-owner-group -Zgzip --build "$root" "Release/xrt_202520.${version}_26.04-amd64-$component.deb" >/dev/null
  done
fi
echo "packaging done"
"""

# xdna-driver's build/build.sh: writes the user's git config as upstream does, honours
# -nokmod, and without it packages the DKMS tree, firmware and module-loading postinst.
XDNA_BUILD_SH = r"""#!/bin/bash
set -euo pipefail
release=0; nokmod=0; nocmake=0; jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    -release) release=1 ;;
    -debug) release=0 ;;
    -nokmod) nokmod=1 ;;
    -nocmake) nocmake=1 ;;
    -j) shift; jobs=$1 ;;
    -help|-h) echo "usage"; exit 0 ;;
    *) echo "unknown option"; echo "usage"; exit 1 ;;
  esac
  shift
done
git config --global --add safe.directory '*'
mkdir -p Release
echo compile >> Release/compile-count
root=$PWD/Release/pkg
rm -rf "$root"; mkdir -p "$root/DEBIAN" "$root/opt/xilinx/xrt/lib"
printf 'Package: xrt_plugin-amdxdna\nVersion: 2.20.1\nArchitecture: amd64\nMaintainer: x <x@example.invalid>\nDepends: xrt-base (>= 2.20)\nDescription: plugin\n' > "$root/DEBIAN/control"
echo shim > "$root/opt/xilinx/xrt/lib/libxrt_driver_xdna.so.2.20.0"
if [ -f ../WITH_POSTINST ]; then
  # a postinst that runs nothing (debhelper's frame alone, which the audit knows): in a
  # test root without /bin/sh, dpkg cannot run it and fails
  printf '#!/bin/sh\nset -e\n' > "$root/DEBIAN/postinst"
  chmod 755 "$root/DEBIAN/postinst"
fi
if [ "$nokmod" = 0 ]; then
  mkdir -p "$root/opt/xilinx/xrt/share/amdxdna" "$root/usr/lib/firmware/amdnpu/17f0_10"
  echo 'PACKAGE_NAME=xrt-amdxdna' > "$root/opt/xilinx/xrt/share/amdxdna/dkms.conf"
  echo fw > "$root/usr/lib/firmware/amdnpu/17f0_10/npu.dev.sbin"
  printf '#!/bin/sh\nrmmod amdxdna\nmodprobe amdxdna\n' > "$root/DEBIAN/postinst"
  chmod 755 "$root/DEBIAN/postinst"
fi
dpkg-deb --root-owner-group --nocheck -Zgzip --build "$root" Release/xrt_plugin.2.20.0_26.04-amd64-amdxdna.deb >/dev/null
"""


def make_upstream(root: Path) -> Upstream:
    # git makes the repositories; the build scripts package with dpkg-deb
    require_tool("git")
    require_tool("dpkg-deb")
    upstream = Upstream(root=root)
    for name in ("aiebu", "libqdma", "xrt", "xdna-driver"):
        (root / name).mkdir(parents=True)
        git.Repo.init(root / name, initial_branch="main")
        upstream.urls[name] = (root / name).as_uri()
    upstream.commit("aiebu", {"lib.txt": "aiebu library\n"}, "aiebu 1")
    upstream.commit("libqdma", {"qdma.c": "/* alveo only */\n"}, "qdma 1")
    upstream.commit(
        "xrt",
        {
            "src/CMake/boostUtil.cmake": BOOST_CMAKE,
            "src/CMake/settings.cmake": "VERSION 2.20\n",
            "build/build.sh": XRT_BUILD_SH,
        },
        "xrt 2.20",
    )
    upstream.link("xrt", "src/aiebu", "aiebu")
    upstream.link("xrt", "src/libqdma", "libqdma")
    upstream.commit(
        "xdna-driver",
        {"CMakeLists.txt": "project(xdna)\n", "build/build.sh": XDNA_BUILD_SH},
        "xdna 1.6",
    )
    upstream.link("xdna-driver", "xrt", "xrt")
    return upstream


BOOST_PATCH = """Subject: cmake: do not ask for boost_system
Upstream-Status: Backport [b979d16f2ee91e2343a989d7a63d14baa4be8e4f]
Repository: xrt
Description:
 synthetic copy of the real backport

diff --git a/src/CMake/boostUtil.cmake b/src/CMake/boostUtil.cmake
--- a/src/CMake/boostUtil.cmake
+++ b/src/CMake/boostUtil.cmake
@@ -1,6 +1,6 @@
 # boost lookup
 if(CMAKE_VERSION VERSION_GREATER "3.29")
   find_package(Boost CONFIG
-    REQUIRED COMPONENTS system filesystem program_options)
+    REQUIRED COMPONENTS filesystem program_options)
 endif()
 set(Boost_USE_MULTITHREADED ON)
"""


def write_recipe(
    project: Path,
    upstream: Upstream,
    *,
    name: str = "synthetic",
    url: str | None = None,
    xrt_pin: str | None = None,
    patches: dict[str, str] | None = None,
    nokmod: bool = True,
) -> Path:
    """A recipe for the synthetic upstream, plus its patch set `patches/<name>/`."""
    series = patches if patches is not None else {"0001-boost.patch": BOOST_PATCH}
    patch_dir = project / "patches" / name
    patch_dir.mkdir(parents=True, exist_ok=True)
    for file, text in series.items():
        (patch_dir / file).write_text(text)
    (patch_dir / "series").write_text("".join(f"{f}\n" for f in series))
    shim_option = "-nokmod, " if nokmod else ""
    recipe = project / "recipes" / f"{name}.yaml"
    recipe.write_text(
        f"""schema: 1
name: {name}
description: synthetic upstream for tests
hosts:
  distro: {{id: ubuntu, version: "26.04"}}
  kernel: ">=7.0, <7.1"
  npu:
    - {{pci: "1022:17f0", revision: "0x10"}}
driver:
  driver: amdxdna (in-tree)
source:
  name: xdna-driver
  url: {url or upstream.urls["xdna-driver"]}
  commit: {upstream.heads["xdna-driver"]}
  submodules:
    - path: xrt
      commit: {xrt_pin or upstream.heads["xrt"]}
  unused_submodules:
    - path: xrt/src/libqdma
      reason: Alveo only
patches: [{name}]
build:
  steps:
    - name: xrt
      cwd: xrt/build
      argv: [./build.sh, -npu, -opt, -noinit, -j, "{{jobs}}", -ccache, -disable-werror]
      packages: ["Release/xrt_*-base.deb", "Release/xrt_*-npu.deb"]
      produces: [xrt-base, xrt-npu]
      ctest: {{total: 3, skipped: 1}}
    - name: shim
      cwd: build
      argv: [./build.sh, -release, {shim_option}-j, "{{jobs}}"]
      packages: ["Release/xrt_plugin*-amdxdna.deb"]
      produces: [xrt_plugin-amdxdna]
  depends:
    ubuntu-26.04: [cmake, g++, libboost-dev]
install:
  order: [xrt-base, xrt-npu, xrt_plugin-amdxdna]
validate:
  gates: [host]
"""
    )
    return recipe
