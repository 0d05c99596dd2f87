"""Write schemas/{recipe,matrix,site}.schema.json from the loaders (config/schemagen.py): the
shipped recipes and matrices, and README's site.yaml example as the site sample; and
schemas/records/<kind>.schema.json from the shapes write_record checks
(state/record_shapes.py). tests/unit/config/test_schemagen.py fails while a shipped schema
differs, tests/unit/state/test_record_shapes.py while schemas/records/ holds another file."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from xdnaforge.config.schemagen import generate
from xdnaforge.state.record_shapes import SHAPES, json_schema

ROOT = Path(__file__).resolve().parent.parent


def site_sample(readme: str) -> str:
    """README's site.yaml example: the first yaml block of its `## site.yaml` section."""
    section = readme.split("\n## site.yaml\n", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def record_schemas() -> dict[str, str]:
    """records/<kind> -> the text of schemas/records/<kind>.schema.json."""
    return {
        f"records/{shape.kind}": json.dumps(json_schema(shape), indent=2) + "\n" for shape in SHAPES
    }


def schemas(root: Path = ROOT) -> dict[str, str]:
    """name -> the text of schemas/<name>.schema.json (records/<kind> for the records)."""
    with tempfile.TemporaryDirectory() as scratch:
        sample = Path(scratch) / "site.yaml"
        sample.write_text(site_sample((root / "README.md").read_text()))
        made = generate(root, sample)
    documents = {name: json.dumps(text, indent=2) + "\n" for name, text in made.items()}
    return {**documents, **record_schemas()}


def main() -> None:
    (ROOT / "schemas" / "records").mkdir(parents=True, exist_ok=True)
    made = schemas()
    for name, text in made.items():
        path = ROOT / "schemas" / f"{name}.schema.json"
        path.write_text(text)
        print(path)
    for stale in (ROOT / "schemas" / "records").glob("*.schema.json"):
        if f"records/{stale.name.removesuffix('.schema.json')}" not in made:
            stale.unlink()
            print(f"removed {stale}")


if __name__ == "__main__":
    main()
