#!/usr/bin/env python3
"""tests/test_docs.py: every link in README.md and docs/*.md names a file
inside the repository (docs travel with a clone; ../shared does not), and
every #anchor names a heading of its target, as GitHub makes anchors."""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
pages = [os.path.join(root, "README.md")] + sorted(
    os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs"))
    if f.endswith(".md"))
link = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
fence = re.compile(r"^\s*```")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but - and _
    dropped, spaces to -."""
    h = re.sub(r"`", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def lines_outside_code(path):
    out, code = [], False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if fence.match(line):
                code = not code
                continue
            if not code:
                out.append((n, line))
    return out


known = {}


def anchors(path):
    """The anchors of path's headings (read once a page)."""
    if path in known:
        return known[path]
    seen, found = {}, set()
    for _, line in lines_outside_code(path):
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if not m:
            continue
        s = slug(m.group(1))
        k = seen.get(s, 0)
        found.add(s if k == 0 else "%s-%d" % (s, k))
        seen[s] = k + 1
    known[path] = found
    return found


bad = 0
for page in pages:
    for n, line in lines_outside_code(page):
        for target in link.findall(line):
            where = "%s:%d: %s" % (os.path.relpath(page, root), n, target)
            if re.match(r"^[a-z]+:", target):
                print("%s: a web address (the docs link only to files of the clone)" % where)
                bad += 1
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not full.startswith(root + os.sep) and full != root:
                print("%s: outside the repository" % where)
                bad += 1
                continue
            if not os.path.exists(full):
                print("%s: no such file" % where)
                bad += 1
                continue
            if anchor and full.endswith(".md") and anchor not in anchors(full):
                print("%s: no heading makes #%s" % (where, anchor))
                bad += 1
print("docs: %d page(s), %d bad link(s)" % (len(pages), bad))
sys.exit(1 if bad else 0)
