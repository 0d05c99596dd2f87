"""The verdict: host facts + upstream facts -> which firmware loads, whether the driver accepts
it, which recipes fit, which consumers are ready, and the one fix.

Pure: data in, a Verdict out. Unknown facts stay unknown (None): a verdict is never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from xdnaforge.compat.evidence import UserspaceVerdict, judge_userspace
from xdnaforge.compat.facts import HostCompat
from xdnaforge.compat.firmware import FirmwareVerdict, judge_firmware, search_order
from xdnaforge.compat.fitness import Finding, judge_consumers, judge_recipe
from xdnaforge.compat.fix import choose_fix
from xdnaforge.config import recipe as recipe_model

__all__ = ["RECORD_SCHEMA", "Finding", "FirmwareVerdict", "Verdict", "resolve", "search_order"]

# compat.json's shape (docs/compat.md, "compat.json"): raised when a key changes meaning or
# goes; a key added is not a new version
RECORD_SCHEMA = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    facts: HostCompat
    firmware: FirmwareVerdict
    recipes: dict[str, Finding]
    consumers: dict[str, Finding]
    fix: str | None
    notes: tuple[str, ...] = field(default_factory=tuple)
    userspace: UserspaceVerdict = field(
        default_factory=lambda: UserspaceVerdict(ok=None, why=(), packages={})
    )
    unlisted: bool = False  # no recipe speaks for this host (its NPU or its driver)

    @property
    def ok(self) -> bool:
        """The firmware is accepted, the installed userspace is not known to be broken, and
        a recipe fits; or no recipe speaks for this host, which works as it is."""
        if self.firmware.accepted is not True or self.userspace.ok is False:
            return False
        return any(f.ok for f in self.recipes.values()) or self.unlisted

    def as_record(self) -> dict[str, Any]:
        """compat.json: the shape docs/compat.md documents as a contract, by `schema`."""
        fw = self.firmware
        return {
            "schema": RECORD_SCHEMA,
            "facts": self.facts.as_record(),
            "firmware": {
                "driver": fw.driver,
                "tried": list(fw.tried),
                "loads": fw.loads,
                "version": fw.version,
                "protocol": fw.protocol,
                "accepted": fw.accepted,
                "why": list(fw.why),
            },
            "recipes": {n: {"fits": f.ok, "why": list(f.why)} for n, f in self.recipes.items()},
            "consumers": {
                n: {
                    "ready": f.ok,
                    "why": list(f.why),
                    "checked": list(f.checked),
                    "unchecked": list(f.unchecked),
                }
                for n, f in self.consumers.items()
            },
            "userspace": {
                "ok": self.userspace.ok,
                "why": list(self.userspace.why),
                "packages": dict(self.userspace.packages),
                "plugin": self.facts.plugin,
            },
            "unlisted": self.unlisted,
            "fix": self.fix,
            "notes": list(self.notes),
            "ok": self.ok,
        }


def resolve(
    host: HostCompat, upstream: dict[str, Any], recipes: list[recipe_model.Recipe]
) -> Verdict:
    fw = judge_firmware(host, upstream)
    judged = {r.name: judge_recipe(r, host, fw, upstream) for r in recipes}
    consumers = judge_consumers(host, fw, upstream)
    userspace = judge_userspace(host)
    notes = []
    if host.cmdline and ("amd_iommu=off" in host.cmdline or "iommu=off" in host.cmdline):
        notes.append("the kernel command line turns the IOMMU off: amdxdna needs it (SVA/PASID)")
    unlisted, why = _unlisted(host, recipes, judged)
    if why:
        notes.append(why)
    return Verdict(
        facts=host,
        firmware=fw,
        recipes=judged,
        consumers=consumers,
        fix=choose_fix(
            host, fw, judged, upstream, userspace, {r.name: r.hosts.distro_id for r in recipes}
        ),
        notes=tuple(notes),
        userspace=userspace,
        unlisted=unlisted,
    )


def _unlisted(
    host: HostCompat, recipes: list[recipe_model.Recipe], judged: dict[str, Finding]
) -> tuple[bool, str | None]:
    """No recipe speaks for this host: none lists its NPU, or none could be held against
    its driver (every contract unknown). Such a host may work as it is; the note says so."""
    if host.pci is None or not judged or any(f.ok for f in judged.values()):
        return False, None
    revision = int(host.revision, 16) if host.revision else None

    def lists(recipe: recipe_model.Recipe) -> bool:
        return any(
            n.pci == host.pci
            and (n.revision is None or revision is None or int(n.revision, 16) == revision)
            for n in recipe.hosts.npus
        )

    listing = [r.name for r in recipes if lists(r)]
    npu = f"NPU {host.pci} rev {host.revision or '?'}"
    if not listing:
        return True, f"no recipe lists {npu}: xdnaforge has nothing to build for it"
    if all(judged[name].ok is None for name in listing):
        return True, (
            f"no recipe's driver contract could be held against this driver "
            f"({', '.join(listing)} list {npu}; see their reasons above)"
        )
    return False, None


def after_kernel(host: HostCompat, release: str, upstream: dict[str, Any]) -> str:
    """What booting another kernel does to the firmware (the in-tree driver of that release
    requests other names: 6.19 -> 7.0 loads npu_7.sbin when it is there)."""
    if host.driver_source == "dkms":
        return (
            f"compat: kernel {release}: the out-of-tree amdxdna is rebuilt for it by DKMS; "
            "its firmware rule does not change"
        )
    if host.pci is None:
        return f"compat: kernel {release}: no NPU found here, nothing to load"
    then = replace(host, kernel=release, drm_version=None, driver_source="in-tree")
    fw = judge_firmware(then, upstream, by_release=True)
    if fw.driver is None:
        return f"compat: kernel {release}: no in-tree driver generation is known for it"
    fw_text = f"{fw.driver}, by release"
    now = judge_firmware(host, upstream)
    loads = (
        f"{fw.loads} ({fw.version or '?'}, protocol {fw.protocol or '?'})"
        if fw.loads
        else "nothing"
    )
    state = {True: "accepted", False: "NOT accepted", None: "acceptance unknown"}[fw.accepted]
    change = "" if now.loads == fw.loads else f" (today: {now.loads or 'nothing'})"
    return f"compat: kernel {release} ({fw_text}) would load {loads}{change}: {state}"
