#!/usr/bin/env python3
"""api-reference.py: the C API reference, one Markdown page per public header (docs/api/).

Every declaration of the public headers (functions, types, enums, structs, NZ_ macros) with the
comment written above it, in header order, under the headers' section banners. The comments are
the reference: a public function or type without one is an error, as is a page that no longer
matches its header.

Usage: scripts/api-reference.py            write docs/api/*.md
       scripts/api-reference.py --check    exit 1 (naming each problem) when a public
                                           declaration has no comment or a page is stale
(stdlib only; ctest runs --check as docs/api_reference)
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADERS = ["include/nonzero.h", "include/nonzero/core.h", "include/nonzero/matrix.h", "include/nonzero/spmv.h",
           "include/nonzero/spmm.h", "include/nonzero/spsv.h", "include/nonzero/spgemm.h",
           "include/nonzero/solver.h", "include/nonzero_dist.h"]
OUT = ROOT / "docs" / "api"


def comment_text(raw):
    """A /* ... */ comment's text: delimiters and leading ' * ' removed, lines kept."""
    body = raw[2:-2]
    lines = body.split("\n")
    out = []
    for i, line in enumerate(lines):
        s = line.strip()
        if i > 0 and s.startswith("*"):
            s = s[1:]
            if s.startswith(" "):
                s = s[1:]
        out.append(s.rstrip() if i > 0 else line.strip())
    while out and not out[-1]:
        out.pop()
    return "\n".join(out).strip()


def is_banner(text):
    return bool(re.fullmatch(r"-{10,}", text.strip()))


def items_of(path):
    """(kind, payload, line) items of a header: 'comment', 'define', 'decl', 'blank'."""
    src = path.read_text()
    i, n, line = 0, len(src), 1
    items = []
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.index("*/", i) + 2
            items.append(("comment", src[i:j], line))
            line += src.count("\n", i, j)
            i = j
        elif c == "\n":
            # a blank line: two newlines with only spaces between
            j = i + 1
            while j < n and src[j] in " \t":
                j += 1
            if j < n and src[j] == "\n":
                items.append(("blank", None, line))
            line += 1
            i += 1
        elif c in " \t":
            i += 1
        elif c == "#":
            j = i
            while True:  # a directive with its continuation lines
                k = src.find("\n", j)
                k = n if k < 0 else k
                if src[k - 1] == "\\" and k < n:
                    j = k + 1
                    continue
                break
            text = src[i:k]
            m = re.match(r"#\s*define\s+(NZ_\w+)", text)
            if m and not m.group(1).startswith("NZ_HAVE_") and not m.group(1).endswith("_H"):
                items.append(("define", (m.group(1), text), line))
            line += src.count("\n", i, k)
            i = k
        else:
            # a declaration: to the ';' at brace depth 0 (comments inside stay in its text)
            depth, j = 0, i
            while j < n:
                if src.startswith("/*", j):
                    j = src.index("*/", j) + 2
                    continue
                ch = src[j]
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth < 0:  # the closing brace of extern "C"
                        break
                elif ch == ";" and depth == 0:
                    j += 1
                    break
                j += 1
            text = src[i:j].strip()
            if text.startswith('extern "C"'):
                text = ""
                j = src.index("{", i) + 1
            if text and text != "}":
                items.append(("decl", text, line))
            line += src.count("\n", i, j)
            i = max(j, i + 1)
    return items


def name_of(decl):
    """The declared name: the function, or the typedef's / struct's name."""
    flat = re.sub(r"/\*.*?\*/", " ", decl, flags=re.S)
    m = re.search(r"\b(nz_\w+)\s*\(", flat)
    if m and not flat.lstrip().startswith("typedef"):
        return m.group(1), "function"
    m = re.search(r"\b(\w+)\s*;\s*$", flat)
    if flat.lstrip().startswith("typedef") and m:
        return m.group(1), "type"
    m = re.match(r"\s*(?:typedef\s+)?(struct|enum|union)\s+(\w+)", flat)
    if m:
        return m.group(2), "type"
    words = flat.split("(")[0].split()
    return (words[-1] if words else flat.strip()[:40]), "declaration"


def page(rel):
    path = ROOT / rel
    items = items_of(path)
    errors = []
    out = ["# `%s`" % rel.replace("include/", ""), ""]
    first = next((p for k, p, _ in items if k == "comment"), None)
    if first:
        out += [comment_text(first), ""]
    out += ["Generated from the header by `scripts/api-reference.py`; the header is the source.",
            ""]
    pending, pending_used, after_decl = None, False, False
    banner = False
    seen_first = False

    def flush():
        """A comment no declaration took (a note on the section): printed as a paragraph."""
        if pending is not None and not pending_used:
            out.extend([pending, ""])

    for kind, payload, line in items:
        if kind == "comment":
            if not seen_first:
                seen_first = True
                continue
            text = comment_text(payload)
            if is_banner(text):
                flush()
                banner = not banner
                pending = None
                continue
            if banner:  # the title between two banner lines
                out += ["## " + text.replace("\n", " "), ""]
                pending = None
                continue
            flush()
            pending, pending_used, after_decl = text, False, False
        elif kind == "blank":
            if after_decl:
                pending = None
            after_decl = False
        else:
            if kind == "define":
                name, text = payload
                what = "macro"
            else:
                text = payload
                name, what = name_of(text)
            doc = pending
            if doc is None and what != "declaration":
                errors.append("%s:%d: %s %s has no comment" % (rel, line, what, name))
            out += ["### `%s`" % name, "", "```c", text, "```", ""]
            if doc and not pending_used:
                out += [doc, ""]
            elif doc:
                out += ["(See the comment above, shared with the declarations before it.)", ""]
            pending_used = doc is not None
            after_decl = True
    flush()
    return "\n".join(out).rstrip() + "\n", errors


def main(argv):
    check = "--check" in argv
    problems = []
    for rel in HEADERS:
        text, errors = page(rel)
        problems += errors
        target = OUT / (Path(rel).stem + ".md")
        if check:
            if not target.exists() or target.read_text() != text:
                problems.append("%s: stale or missing (run scripts/api-reference.py)"
                                % target.relative_to(ROOT))
        else:
            OUT.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    index = ["# C API reference", "",
             "One page per public header, generated from the headers' comments "
             "(`scripts/api-reference.py`; `make test` checks that they match).", ""]
    for rel in HEADERS:
        index.append("- [`%s`](%s.md)" % (rel.replace("include/", ""), Path(rel).stem))
    index_text = "\n".join(index) + "\n"
    target = OUT / "README.md"
    if check:
        if not target.exists() or target.read_text() != index_text:
            problems.append("docs/api/README.md: stale or missing (run scripts/api-reference.py)")
    else:
        target.write_text(index_text)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
