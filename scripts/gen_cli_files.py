"""Write the shell completion files and the man page from the `xdnaforge` command's own
generators (tests/integration/test_cli_files.py fails while a shipped file differs)."""

from __future__ import annotations

from pathlib import Path

from xdnaforge.cli import completion, manpage
from xdnaforge.cli.main import checkout_dodo, load_dodo

ROOT = Path(__file__).resolve().parent.parent
FILES = {
    "completions/xdnaforge.bash": lambda dodo: completion.script("bash", dodo),
    "completions/_xdnaforge": lambda dodo: completion.script("zsh", dodo),
    "man/xdnaforge.1": manpage.render,
}


def main() -> None:
    dodo_path = checkout_dodo()
    assert dodo_path is not None
    dodo = load_dodo(dodo_path)
    for name, make in FILES.items():
        path = ROOT / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(make(dodo))
        print(path)


if __name__ == "__main__":
    main()
