"""``sluiceway new source|sink|transform NAME [--directory DIR] [--package PKG]``.

Generates a plugin package that installs (``pip install -e '.[test]'``) and passes its
own end-to-end tests as it is: ``pyproject.toml`` with the ``sluiceway.plugins`` entry
point, ``src/<package>/`` with the config model and the connector and task classes (or
the transformation), a README, and ``tests/test_<package>.py`` using Sluiceway's pytest
plugin. Exits 1, writing nothing, when the name is not a Python identifier (dashes
aside), the package name is taken, or the target directory exists and is not empty.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import cast

from sluiceway.scaffold.names import KINDS, InvalidName, Kind, plugin_names
from sluiceway.scaffold.render import render, write


def parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Generate a Sluiceway plugin package: a source or sink connector, or a transform.",
    )
    p.add_argument("kind", choices=KINDS, help="what the plugin is")
    p.add_argument("name", help="distribution name, e.g. counter-source (dashes become underscores)")
    p.add_argument(
        "--directory",
        "-d",
        metavar="DIR",
        help="where to generate it (default: ./NAME); must be empty or new",
    )
    p.add_argument(
        "--package",
        "-p",
        metavar="PKG",
        help="import package name (default: NAME with dashes as underscores)",
    )
    return p


def main(argv: list[str] | None = None, prog: str = "sluiceway new") -> int:
    args = parser(prog).parse_args(argv)
    try:
        names = plugin_names(cast(Kind, args.kind), args.name, args.package)
    except InvalidName as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    directory = Path(args.directory if args.directory is not None else args.name)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        what = "is not a directory" if not directory.is_dir() else "exists and is not empty"
        print(f"{prog}: error: {directory} {what}; choose another with --directory", file=sys.stderr)
        return 1
    written = write(render(names), directory)
    print(f"Created the {names.kind} plugin package {names.name} in {directory}:")
    for path in written:
        print(f"  {path.relative_to(directory)}")
    print(f"\nNext:\n  cd {directory}\n  pip install -e '.[test]'\n  pytest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
