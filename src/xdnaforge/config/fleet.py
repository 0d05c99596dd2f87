"""The `fleet:` mapping of site.yaml: signing key, URLs a lab serves and pushes to; pure.

Parsing only: config/site.py hands over its Reader; nothing here touches gpg, aptly or the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdnaforge.schema import Reader

KEYS = ("signing_key", "gnupg_home", "apt_url", "results_url", "xdnaforge_url", "docker_image")


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetSettings:
    signing_key: str | None  # the gpg key (id or fingerprint) aptly signs the repository with
    gnupg_home: Path | None  # GNUPGHOME for aptly and gpg; None: gpg's default (~/.gnupg)
    apt_url: str | None  # where a web server serves artifacts/apt/public
    results_url: str | None  # where a LAVA job pushes validation.json (HTTP PUT)
    xdnaforge_url: str | None  # git URL a lab host clones xdnaforge from to run the gates
    docker_image: str | None  # the image docker jobs run in (with the NPU passed through)


NONE = FleetSettings(
    signing_key=None,
    gnupg_home=None,
    apt_url=None,
    results_url=None,
    xdnaforge_url=None,
    docker_image=None,
)


def parse_fleet(reader: Reader, value: Any, base: Path) -> FleetSettings:
    """`fleet:` from site.yaml; relative gnupg_home is relative to the site file."""
    data = reader.mapping(value, ("fleet",), optional=KEYS)
    if data is None:
        return NONE
    home = reader.string(data, "gnupg_home", ("fleet",))
    gnupg = None
    if home is not None:
        gnupg = Path(home).expanduser()
        gnupg = gnupg if gnupg.is_absolute() else base / gnupg
    return FleetSettings(
        signing_key=reader.string(data, "signing_key", ("fleet",)),
        gnupg_home=gnupg,
        apt_url=_url(reader, data, "apt_url"),
        results_url=_url(reader, data, "results_url"),
        xdnaforge_url=reader.string(data, "xdnaforge_url", ("fleet",)),
        docker_image=reader.string(data, "docker_image", ("fleet",)),
    )


def _url(reader: Reader, data: dict[str, Any], key: str) -> str | None:
    url = reader.string(data, key, ("fleet",))
    if url is not None and "://" not in url:
        reader.problem(("fleet", key), "is not a URL", hint="e.g. https://lab.example/apt")
        return None
    return url.rstrip("/") if url else None
