"""Write schemas/{recipe,matrix,site}.schema.json from the loaders (config/schemagen.py): the
shipped recipes and matrices, and README's site.yaml example as the site sample
(tests/unit/config/test_schemagen.py fails while a shipped schema differs)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from xdnaforge.config.schemagen import generate

ROOT = Path(__file__).resolve().parent.parent


def site_sample(readme: str) -> str:
    """README's site.yaml example: the first yaml block of its `## site.yaml` section."""
    section = readme.split("\n## site.yaml\n", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def schemas(root: Path = ROOT) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as scratch:
        sample = Path(scratch) / "site.yaml"
        sample.write_text(site_sample((root / "README.md").read_text()))
        made = generate(root, sample)
    return {name: json.dumps(text, indent=2) + "\n" for name, text in made.items()}


def main() -> None:
    (ROOT / "schemas").mkdir(exist_ok=True)
    for name, text in schemas().items():
        path = ROOT / "schemas" / f"{name}.schema.json"
        path.write_text(text)
        print(path)


if __name__ == "__main__":
    main()
