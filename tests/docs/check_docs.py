#!/usr/bin/env python3
"""Every link in the project's Markdown resolves, and every repository path the docs name exists.

Checks, in README.md, docs/**/*.md, blueprints/README.md and the other tracked *.md files:
- [text](target) links that are not URLs: the file exists and, with #anchor, the target has a
  heading with that GitHub anchor;
- `code spans` that name a path in the repository (starting with one of its top-level directories):
  the file or directory exists (globs, placeholders and build outputs are skipped).
Usage: check_docs.py REPOSITORY_ROOT
"""
import os
import re
import subprocess
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
TOP = ("core/", "plugin/", "launcher/", "scripts/", "tests/", "docs/", "perf/", "profiles/",
       "blueprints/", "monitoring/", "cmake/", ".ci/")


def markdown_files():
    listed = subprocess.run(["git", "-C", root, "ls-files", "*.md"], capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout.strip():
        return [os.path.join(root, f) for f in listed.stdout.split()]
    found = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
        found += [os.path.join(d, f) for f in files if f.endswith(".md")]
    return found


def anchors(path):
    """GitHub's anchors of a Markdown file's headings (lower case, punctuation dropped, spaces -> -)."""
    result, fenced = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
        base, n = slug, 1
        while slug in result:
            slug, n = f"{base}-{n}", n + 1
        result.add(slug)
    return result


def strip_code_blocks(text):
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


problems = []
for md in sorted(markdown_files()):
    shown = os.path.relpath(md, root)
    if shown.startswith("tests/fixtures/"):
        continue
    text = strip_code_blocks(open(md, encoding="utf-8").read())
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = md if not file_part else os.path.normpath(os.path.join(os.path.dirname(md), file_part))
        if not os.path.exists(dest):
            problems.append(f"{shown}: link to {target}: {os.path.relpath(dest, root)} does not exist")
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            problems.append(f"{shown}: link to {target}: no heading with anchor #{anchor}")
    for span in re.findall(r"`([^`\n]+)`", text):
        for word in span.split():
            word = word.rstrip(".,:;)")
            if not word.startswith(TOP) or re.search(r"[*<>{}$=|\[\]]|\.\.\.", word):
                continue
            if not os.path.exists(os.path.join(root, word)):
                problems.append(f"{shown}: `{word}` does not exist in the repository")

for p in problems:
    print(p)
print(f"check_docs: {len(problems)} problem(s)" if problems else "check_docs: every link and named path resolves")
sys.exit(1 if problems else 0)
