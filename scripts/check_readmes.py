#!/usr/bin/env python3
"""Prints every tracked file that its folder's README.md does not list.

Each folder that holds tracked files (except the data folders in SKIP) needs a
README.md naming every file directly in it. A name counts as listed when it
appears in the README, either literally or through a brace group such as
`offsets.{h,cc}` or `store{,_test}.cc`. A folder whose every file an
ancestor's README lists by its relative path (`web/index.html`) needs no
README of its own: supervisor/console/web, for one, is embedded whole into
the binary, so a README there would be served as a console asset. Prints one line per missing README or
unlisted file; prints nothing (exit 0) when every folder is covered.

Run from the repository root: python3 scripts/check_readmes.py
"""
import fnmatch
import os
import re
import subprocess
import sys

# Folders of data, not code: fuzz seed corpora, images and test fixtures.
SKIP = ["fuzz/corpus", "fuzz/corpus/*", "docs/images", "tests/*/testdata",
        "tests/*/testdata/*", "common/druid/testdata",
        "common/druid/testdata/*"]

BRACE = re.compile(r"([\w.\-/]*)\{([^{}\s]*)\}([\w.\-/]*)")


def expand(text):
    """Returns the names written with brace groups, e.g. a.{h,cc} -> a.h a.cc."""
    names = set()
    for m in BRACE.finditer(text):
        pending = [m.group(1) + alt + m.group(3) for alt in m.group(2).split(",")]
        while pending:
            name = pending.pop()
            inner = BRACE.search(name)
            if inner:
                pending.extend(name[:inner.start()] + inner.group(1) + alt +
                               inner.group(3) + name[inner.end():]
                               for alt in inner.group(2).split(","))
            else:
                names.add(name)
    return names


def expand_paths(text):
    """Like expand, but keeps the folder part of each name."""
    return expand(text)


def listed(name, text, braced):
    if name in braced or any(b.rsplit("/", 1)[-1] == name and "/" not in b
                             for b in braced):
        return True
    return re.search(r"(?<![\w.\-])" + re.escape(name) + r"(?![\w\-]|\.\w)",
                     text) is not None


def readme_text(folder, cache={}):
    """The README of `folder` and the names its brace groups spell, or None."""
    if folder not in cache:
        path = os.path.join(folder, "README.md")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            cache[folder] = (text, expand_paths(text))
        else:
            cache[folder] = None
    return cache[folder]


def listed_by_ancestor(folder, name):
    """True when the README of an ancestor of `folder` names the file."""
    parts = [] if folder == "." else folder.split("/")
    for i in range(len(parts) - 1, -1, -1):
        ancestor = "/".join(parts[:i]) or "."
        rel = "/".join(parts[i:] + [name])
        found = readme_text(ancestor)
        if found and (rel in found[1] or re.search(
                r"(?<![\w.\-/])" + re.escape(rel) + r"(?![\w\-]|\.\w)",
                found[0])):
            return True
    return False


def main():
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    by_dir = {}
    for f in filter(None, files):
        d, name = os.path.split(f)
        by_dir.setdefault(d or ".", []).append(name)
    missing = 0
    for d in sorted(by_dir):
        if any(fnmatch.fnmatch(d, p) for p in SKIP):
            continue
        names = [n for n in sorted(by_dir[d]) if n != "README.md"]
        found = readme_text(d)
        if found is None:
            if not all(listed_by_ancestor(d, n) for n in names):
                print(f"{d}/: no README.md")
                missing += 1
            continue
        text, braced = found
        for name in names:
            if not listed(name, text, braced) and not listed_by_ancestor(d, name):
                print(f"{d}/{name}")
                missing += 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
