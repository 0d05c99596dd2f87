"""The runtime side of hosts that run userspace in a container: a Containerfile that installs
exactly the audited packages, and the podman/docker lines that give it the NPU. Pure: the
audit record and the recipe in, file texts out; the audit stage writes them."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from xdnaforge.config.recipe import Recipe

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


def containerfile(recipe: Recipe, audit: Mapping[str, Any]) -> str:
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
FROM {base}
COPY {" ".join(p["file"] for p in packages)} /tmp/xdnaforge/
RUN cd /tmp/xdnaforge \\
 && printf '%s\\n' \\
{checks}    | sha256sum --check --strict - \\
 && apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {installs} \\
 && rm -rf /tmp/xdnaforge /var/lib/apt/lists/* \\
 && if find {forbidden} -type f 2>/dev/null | grep -q .; then \\
      echo 'xdnaforge: firmware or kernel modules in the image' >&2; exit 1; fi
ENV XILINX_XRT=/opt/xilinx/xrt PATH=/opt/xilinx/xrt/bin:$PATH LD_LIBRARY_PATH=/opt/xilinx/xrt/lib
LABEL org.opencontainers.image.title="xdnaforge {recipe.name} runtime" \\
      io.xdnaforge.packages="{" ".join(f"{p['package']}={p['version']}" for p in packages)}"
CMD ["xrt-smi", "examine"]
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


def readme(recipe: Recipe, audit: Mapping[str, Any]) -> str:
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
