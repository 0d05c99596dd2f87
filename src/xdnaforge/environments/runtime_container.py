"""The runtime side of hosts that run userspace in a container: a Containerfile that installs
exactly the audited packages, and the podman/docker lines that give it the NPU. Pure: the
audit record, the recipe and the layout the packages' files make (hardware/xrt_layout) in,
file texts out; the audit stage writes them."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from xdnaforge.config.recipe import Recipe
from xdnaforge.hardware.xrt_layout import XrtLayout, system_lib_dir

FOLDER = "container"  # under artifacts/<target>/, beside debs/ (the build context)
DEVICE = "/dev/accel/accel0"
# what the image may never hold: the host's kernel provides the driver and loads the firmware
FORBIDDEN = ("/lib/firmware", "/usr/lib/firmware", "/lib/modules", "/usr/lib/modules")


def _selected(recipe: Recipe, audit: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The packages `doit install` would install, in its order, each as the audit passed it."""
    audited = {p["package"]: p for p in audit.get("packages", []) if p.get("verdict") == "pass"}
    missing = [name for name in recipe.install_order if name not in audited]
    if missing:
        raise ValueError(f"not audited with a pass: {', '.join(missing)}")
    return [audited[name] for name in recipe.install_order]


def image_name(recipe: Recipe, packages: Sequence[Mapping[str, Any]]) -> str:
    """A tag that changes whenever an installed file does."""
    digest = hashlib.sha256("".join(p["sha256"] for p in packages).encode()).hexdigest()
    return f"localhost/xdnaforge-{recipe.name}:{digest[:12]}"


# PATH holds these without being told (the loader's own are hardware/xrt_layout.system_lib_dir)
SYSTEM_BIN = ("/usr/bin", "/bin", "/usr/local/bin")


def environment(layout: XrtLayout) -> str:
    """The image's ENV line for the stack's layout; empty for a /usr (distro) stack, which
    PATH and the loader find by themselves."""
    parts = []
    if str(layout.bin_dir) not in SYSTEM_BIN:
        # XRT 2.19/2.20 find their root from XILINX_XRT; main derives it (dladdr) and ignores it
        parts += [f"XILINX_XRT={layout.bin_dir.parent}", f"PATH={layout.bin_dir}:$PATH"]
    if not system_lib_dir(layout.lib_dir):
        parts.append(f"LD_LIBRARY_PATH={layout.lib_dir}")
    return f"ENV {' '.join(parts)}\n" if parts else ""


def layout_check(layout: XrtLayout) -> str:
    """RUN lines that fail the image build unless xrt-smi and the plugin are where the layout
    of the audited packages says (the validate gates read the same layout)."""
    plugin = layout.plugin_dir or layout.lib_dir
    return (
        f" && if ! test -x {layout.xrt_smi}; then \\\n"
        f"      echo 'xdnaforge: no {layout.xrt_smi} in the image' >&2; exit 1; fi \\\n"
        f" && if ! ls {plugin}/libxrt_driver_xdna.so* >/dev/null 2>&1; then \\\n"
        f"      echo 'xdnaforge: no amdxdna plugin (libxrt_driver_xdna.so*) in {plugin}' >&2; \\\n"
        "      exit 1; fi \\\n"
    )


def containerfile(recipe: Recipe, audit: Mapping[str, Any], layout: XrtLayout) -> str:
    packages = _selected(recipe, audit)
    base = recipe.hosts.runtime_image
    names = [PurePosixPath(p["file"]).name for p in packages]
    checks = "".join(
        f"      '{p['sha256']}  {name}' \\\n" for p, name in zip(packages, names, strict=True)
    )
    installs = " ".join(f"./{name}" for name in names)
    forbidden = " ".join(FORBIDDEN)
    return f"""\
# Runtime image of {recipe.name}: its audited userspace packages on {base}, for hosts that
# run userspace in a container ({recipe.hosts.distro_id} {recipe.hosts.distro_version}).
# Written by `doit audit --target {recipe.name}` from audit.json; edits are overwritten.
#
# Firmware-free: the amdxdna driver and the NPU firmware stay the host kernel's. The packages
# below passed the audit (no kernel module, DKMS tree, firmware or module-loading script),
# are checked against the audited sha256 before anything is installed, and the build fails if
# they or their dependencies put any file under {forbidden}.
#
# Build, from the repository root (the context is artifacts/{recipe.name}):
#   podman build -t {image_name(recipe, packages)} -f {FOLDER}/Containerfile artifacts/{recipe.name}
# Run: see {FOLDER}/README.md.
# XRT layout of these packages: {layout.describe()}
FROM {base}
COPY {" ".join(p["file"] for p in packages)} /tmp/xdnaforge/
RUN cd /tmp/xdnaforge \\
 && printf '%s\\n' \\
{checks}    | sha256sum --check --strict - \\
 && apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {installs} \\
{layout_check(layout)} && rm -rf /tmp/xdnaforge /var/lib/apt/lists/* \\
 && if find {forbidden} -type f 2>/dev/null | grep -q .; then \\
      echo 'xdnaforge: firmware or kernel modules in the image' >&2; exit 1; fi
{environment(layout)}LABEL org.opencontainers.image.title="xdnaforge {recipe.name} runtime" \\
      io.xdnaforge.packages="{" ".join(f"{p['package']}={p['version']}" for p in packages)}"
CMD ["{layout.xrt_smi}", "examine"]
"""


def run_lines(recipe: Recipe, audit: Mapping[str, Any]) -> dict[str, str]:
    """The podman and docker lines that give the container the NPU node and its limits."""
    image = image_name(recipe, _selected(recipe, audit))
    common = f"--rm -it --device {DEVICE} --ulimit memlock=-1:-1"
    return {
        # rootless podman keeps the caller's supplementary groups (render owns the node)
        "podman": f"podman run {common} --group-add keep-groups {image}",
        # the docker daemon does not: add the host's render group by number
        "docker": (
            f'docker run {common} --group-add "$(getent group render | cut -d: -f3)" {image}'
        ),
    }


def readme(recipe: Recipe, audit: Mapping[str, Any], layout: XrtLayout) -> str:
    packages = _selected(recipe, audit)
    lines = run_lines(recipe, audit)
    listed = "\n".join(
        f"- `{p['package']}` {p['version']}: `{p['file']}`, sha256 `{p['sha256']}`"
        for p in packages
    )
    return f"""\
# {recipe.name}: the userspace in a container

The hosts of this recipe ({recipe.hosts.distro_id} {recipe.hosts.distro_version}) run the NPU
userspace in a container made from `{recipe.hosts.runtime_image}`. `Containerfile` installs
exactly these audited packages, checked by sha256 before installing:

{listed}

Where the stack lives in the image, from these packages' files: {layout.describe()}.
The image build fails unless `{layout.xrt_smi}` and the amdxdna plugin are there.

Build it from the repository root:

    podman build -t {image_name(recipe, packages)} \\
        -f artifacts/{recipe.name}/{FOLDER}/Containerfile artifacts/{recipe.name}

Run it with the NPU node, unlimited locked memory (XRT pins buffers) and the group that owns
the node (`render` on most distros):

    {lines["podman"]}
    {lines["docker"]}

Rootless podman can only pass limits the user already has: the host's hard memlock limit
must be unlimited (`doit memlock` writes the drop-in on a host that has a writable /etc).

Firmware-free: the image holds no firmware and no kernel module. The amdxdna driver and the
NPU firmware are the host kernel's; the packages passed the audit, and the image build fails
if any file appears under {", ".join(f"`{f}`" for f in FORBIDDEN)}.

`doit validate` run inside the container (with this checkout bound in) records that it ran
in a container: its memlock and device gates then read the container's own limits and
`/dev/accel` nodes, which are what the flags above set.
"""
