#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""md2man: a man page (roff, man(7) macros) from one of toroid's markdown pages.

    pkg/md2man.py PAGE.md NAME SECTION OUT

The docs are the source of the man pages, so the two cannot drift apart. Handled: headings,
paragraphs, fenced code (.nf/.fi), lists, tables (one row a line), `code`, **bold**, *italic*
and [links](target) (the text is kept). The NAME line's summary is the page's
`<!-- summary: TEXT -->` line (man(7): a short phrase, "toroid-node - the toroid engine
daemon"); a page without one gets the first sentence of its first paragraph.
"""
import re
import sys


def esc(text):
    text = text.replace("\\", "\\e")
    # a line that starts with . or ' would be a roff request
    return re.sub(r"^([.'])", r"\\&\1", text)


def inline(text):
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    text = esc(text)
    text = re.sub(r"`([^`]+)`", r"\\fB\1\\fR", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", text)
    text = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\\fI\1\\fR", text)
    return text


def convert(md, name, section):
    lines = md.splitlines()
    out = [f'.TH "{name.upper()}" "{section}" "" "toroid" "toroid manual"']
    summary = None
    i = 0
    para = []

    def flush():
        nonlocal summary
        if para:
            text = " ".join(p.strip() for p in para)
            if summary is None:
                summary = re.sub(r"\\f[BIR]", "", inline(text)).split(". ")[0].rstrip(".")
            out.append(".PP")
            out.append(inline(text))
            para.clear()
    name_done = False
    given = None
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^<!--\s*summary:\s*(.*?)\s*-->\s*$", line)
        if m and given is None:
            given = m.group(1)
        if line.startswith("<!--"):
            i += 1
            continue
        if line.startswith("```"):
            flush()
            out.append(".PP\n.nf\n.RS 4")
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                out.append(esc(lines[i]))
                i += 1
            out.append(".RE\n.fi")
            i += 1
            continue
        m = re.match(r"^(#+)\s+(.*)$", line)
        if m:
            flush()
            level, title = len(m.group(1)), m.group(2)
            if level == 1:
                name_done = True
                out.append(".SH NAME")
                out.append("@NAME@")
            elif level == 2:
                out.append(f".SH {esc(title.upper())}")
            else:
                out.append(f".SS {inline(title)}")
            i += 1
            continue
        if line.startswith("|"):
            flush()
            if re.match(r"^\|[\s:|-]+\|$", line):
                i += 1
                continue
            if i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|$", lines[i + 1]):
                i += 2  # the header row and its rule
                continue
            # "\|" is a bar inside a cell (GitHub's table syntax), not a cell's end
            cells = [c.strip().replace("\\|", "|")
                     for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            out.append(".TP")
            out.append(inline(cells[0]))
            out.append(inline(" \\(em ".join(cells[1:])) if len(cells) > 1 else "")
            i += 1
            continue
        m = re.match(r"^\s*([-*]|\d+\.)\s+(.*)$", line)
        if m and not para:
            flush()
            item = [m.group(2)]
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                item.append(lines[i].strip())
                i += 1
            out.append(".IP \\(bu 2")
            out.append(inline(" ".join(item)))
            continue
        if not line.strip():
            flush()
        else:
            para.append(line)
        i += 1
    flush()
    if not name_done:
        out.insert(1, ".SH NAME\n@NAME@")
    text = "\n".join(out) + "\n"
    if given:
        summary = re.sub(r"\\f[BIR]", "", inline(given))
    elif summary:
        summary = re.sub(rf"^{re.escape(name)}\s+", "", summary)
    return text.replace("@NAME@", f"{name} \\- {summary or name}", 1).replace("@NAME@\n", "")


def main():
    if len(sys.argv) != 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    src, name, section, dst = sys.argv[1:]
    with open(src) as f:
        page = convert(f.read(), name, section)
    with open(dst, "w") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
