#!/usr/bin/env python3
"""The include check of docs/architecture.md: every quoted #include goes down a floor, never up.

Reads the floor table between the `floors:begin` and `floors:end` markers of docs/architecture.md
(rows `| folder | wing | floor |`), then checks every .h/.cc file under those folders: a file may
include headers of its own folder, and of folders on a lower floor that are in its own wing or in
the `shared` wing. Fails (exit 1) naming the file, the line and the rule broken; a source folder
missing from the table fails too, so a new folder must be placed on a floor first.

    contrib/check-architecture.py [REPO_ROOT]
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
UNCHECKED = ("tests", "bench", "contrib", "docs", "etc", "build")  # test code may use any floor


def read_floors(doc):
    text = doc.read_text()
    try:
        table = text.split("<!-- floors:begin -->")[1].split("<!-- floors:end -->")[0]
    except IndexError:
        sys.exit(f"{doc}: no <!-- floors:begin --> ... <!-- floors:end --> table")
    floors = {}
    for line in table.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[2].isdigit():
            continue  # the header and separator rows
        folder, wing, floor = cells
        floors[folder.rstrip("/")] = (wing, int(floor))
    if not floors:
        sys.exit(f"{doc}: the floor table has no rows")
    return floors


def folder_of(path, floors):
    """The table folder that holds `path` (a repo-relative file path) directly, else None."""
    parent = pathlib.PurePosixPath(path).parent.as_posix()
    return parent if parent in floors else None


def check_file(root, path, floors, errors):
    rel = path.relative_to(root).as_posix()
    here = folder_of(rel, floors)
    if here is None:
        errors.append(f"{rel}: folder {path.parent.relative_to(root)} is not in "
                      "docs/architecture.md's floor table: add it on a floor")
        return
    wing, floor = floors[here]
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        m = INCLUDE.match(line)
        if not m or not (root / m.group(1)).exists():
            continue  # system or generated headers
        there = folder_of(m.group(1), floors)
        if there is None or there == here:
            continue
        their_wing, their_floor = floors[there]
        if their_floor >= floor:
            errors.append(f"{rel}:{number}: includes {m.group(1)}: {there} (floor {their_floor}) "
                          f"is not below {here} (floor {floor})")
        elif their_wing not in ("shared", wing):
            errors.append(f"{rel}:{number}: includes {m.group(1)}: {there} is in wing "
                          f"'{their_wing}', {here} in '{wing}'; only 'shared' crosses wings")


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    floors = read_floors(root / "docs" / "architecture.md")
    errors = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix not in (".h", ".cc") or rel.parts[0].startswith(".") \
                or rel.parts[0] in UNCHECKED or rel.parts[0].startswith("build"):
            continue
        check_file(root, path, floors, errors)
    for error in errors:
        print(error)
    print(f"check-architecture: {len(floors)} folders, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
