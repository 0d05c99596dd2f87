"""The compat verdict as text for the terminal (pure)."""

from __future__ import annotations

from xdnaforge.compat.resolver import Finding, Verdict

_STATE = {True: "yes", False: "NO", None: "unknown"}


def word(ok: bool | None) -> str:
    """A judged thing in one word, as every compat line says it: yes, NO, unknown."""
    return _STATE[ok]


def _finding(name: str, finding: Finding, word: str) -> list[str]:
    lines = [f"  {name}: {word} {_STATE[finding.ok]}"]
    lines.extend(f"      {why}" for why in finding.why)
    return lines


def format_verdict(verdict: Verdict) -> str:
    facts, fw = verdict.facts, verdict.firmware
    lines = [
        f"compat: {facts.origin}: kernel {facts.kernel or '?'}, NPU {facts.pci or '?'} rev "
        f"{facts.revision or '?'}, amdxdna {facts.driver_source or '?'} DRM "
        f"{facts.drm_version or '?'}",
        f"firmware: loads {fw.loads or 'nothing'}"
        + (f" ({fw.version}, protocol {fw.protocol or '?'})" if fw.loads else "")
        + f"; accepted: {_STATE[fw.accepted]}",
    ]
    lines.extend(f"  {why}" for why in fw.why)
    lines.append("recipes:")
    for name, finding in sorted(verdict.recipes.items()):
        lines.extend(_finding(name, finding, "fits"))
    lines.append("consumers:")
    for name, finding in sorted(verdict.consumers.items()):
        lines.extend(_finding(name, finding, "ready"))
        if finding.checked:
            lines.append(f"      checked: {', '.join(finding.checked)}")
        if finding.unchecked:
            lines.append(f"      not checked: {', '.join(finding.unchecked)}")
    lines.append(userspace_line(verdict))
    lines.extend(f"note: {note}" for note in verdict.notes)
    if verdict.fix:
        lines.append(f"fix: {verdict.fix}")
    elif verdict.ok:
        lines.append(
            "fix: nothing to change (the host works as it is; no recipe to build for it)"
            if verdict.unlisted and not any(f.ok for f in verdict.recipes.values())
            else "fix: nothing to change"
        )
    else:
        lines.append(f"fix: none known: {_undecided(verdict)}")
    return "\n".join(lines)


def userspace_line(verdict: Verdict) -> str:
    """The installed userspace's verdict in one line (doit compat and doctor print it)."""
    userspace = verdict.userspace
    return f"userspace: {_STATE[userspace.ok]} ({'; '.join(userspace.why)})"


def _undecided(verdict: Verdict) -> str:
    """What stands between this verdict and a fix: the one fact that would decide."""
    fw = verdict.firmware
    if fw.accepted is None:
        return fw.why[-1] if fw.why else "the firmware verdict is unknown"
    if verdict.unlisted:
        return next((n for n in verdict.notes if n.startswith("no recipe")), "no recipe lists it")
    return "the recipe verdicts above say what does not hold"


def plan_line(verdict: Verdict, recipe: str) -> str:
    """One line for `doit plan`: can the host this runs on run the target's recipe?"""
    fits = verdict.recipes.get(recipe)
    state = _STATE[fits.ok if fits else None]
    firmware = _STATE[verdict.firmware.accepted]
    why = "; ".join(fits.why) if fits and fits.ok is not True else ""
    line = f"compat (this host): {recipe} fits: {state}; firmware accepted: {firmware}"
    return (
        line
        + (f" ({why})" if why else "")
        + (f"; fix: {verdict.fix}" if verdict.fix and verdict.firmware.accepted is False else "")
    )


def firmware_line(verdict: Verdict) -> str:
    """The firmware on this host in one line: what loads, whether it is accepted, the fix."""
    fw = verdict.firmware
    loads = (
        f"{fw.loads} ({fw.version or '?'}, protocol {fw.protocol or '?'})"
        if fw.loads
        else ("nothing")
    )
    line = f"compat (this host): firmware loads {loads}; accepted: {_STATE[fw.accepted]}"
    if fw.accepted is not True and fw.why:
        line += f" ({'; '.join(fw.why)})"
    if fw.accepted is False and verdict.fix:
        line += f"; fix: {verdict.fix}"
    return line


def build_warning(verdict: Verdict, recipe: str) -> str | None:
    """For `doit build`: a line when the host it runs on cannot run the recipe (its contract
    does not hold, or the firmware will be rejected); None when it can or nothing is known."""
    fits = verdict.recipes.get(recipe)
    reasons = list(fits.why) if fits is not None and fits.ok is False else []
    if verdict.firmware.accepted is False:
        reasons.append(
            f"the driver rejects the firmware ({'; '.join(verdict.firmware.why)})"
            + (f"; fix: {verdict.fix}" if verdict.fix else "")
        )
    if not reasons:
        return None
    return (
        f"warning: this host cannot run {recipe} as it is: {'; '.join(reasons)} (building "
        "anyway: the packages may be for another machine; `doit compat` says more)"
    )
