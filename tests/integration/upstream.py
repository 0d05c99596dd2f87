"""A small synthetic upstream built with GitPython: "xdna-driver" with an `xrt` submodule that
has its own nested submodule (`src/aiebu`) and one the build does not need (`src/libqdma`).

Submodules are recorded as gitlinks + .gitmodules directly, so building the upstream needs
no clone and no network; recipes point at it through file:// URLs or site mirrors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import git

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
        repo.git.add("--all")
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


def make_upstream(root: Path) -> Upstream:
    upstream = Upstream(root=root)
    for name in ("aiebu", "libqdma", "xrt", "xdna-driver"):
        (root / name).mkdir(parents=True)
        git.Repo.init(root / name, initial_branch="main")
        upstream.urls[name] = (root / name).as_uri()
    upstream.commit("aiebu", {"lib.txt": "aiebu library\n"}, "aiebu 1")
    upstream.commit("libqdma", {"qdma.c": "/* alveo only */\n"}, "qdma 1")
    upstream.commit(
        "xrt",
        {"src/CMake/boostUtil.cmake": BOOST_CMAKE, "src/CMake/settings.cmake": "VERSION 2.20\n"},
        "xrt 2.20",
    )
    upstream.link("xrt", "src/aiebu", "aiebu")
    upstream.link("xrt", "src/libqdma", "libqdma")
    upstream.commit("xdna-driver", {"CMakeLists.txt": "project(xdna)\n"}, "xdna 1.6")
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
) -> Path:
    """A recipe for the synthetic upstream, plus its patch set `patches/<name>/`."""
    series = patches if patches is not None else {"0001-boost.patch": BOOST_PATCH}
    patch_dir = project / "patches" / name
    patch_dir.mkdir(parents=True, exist_ok=True)
    for file, text in series.items():
        (patch_dir / file).write_text(text)
    (patch_dir / "series").write_text("".join(f"{f}\n" for f in series))
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
      argv: [./build.sh, -npu, -opt, -noinit, -j, "{{jobs}}"]
      packages: ["Release/*.deb"]
      produces: [xrt-base, xrt-npu]
    - name: shim
      cwd: build
      argv: [./build.sh, -release, -nokmod, -j, "{{jobs}}"]
      packages: ["Release/*.deb"]
      produces: [xrt_plugin-amdxdna]
  depends:
    ubuntu-26.04: [cmake]
install:
  order: [xrt-base, xrt-npu, xrt_plugin-amdxdna]
validate:
  gates: [host]
"""
    )
    return recipe
