#!/usr/bin/env python3
"""Turns one of ddpctl's Markdown docs into a man page (roff), at build time:
headings become sections, tables become tagged paragraphs (the first cell is
the tag, the others follow), lists, code blocks and inline code keep their
shape. Only the Markdown the docs use is handled.

    cmake/md2man.py docs/spec.md NAME SECTION TITLE VERSION > ddpctl-spec.5
"""
import os
import re
import sys
import time


def inline(text):
    text = text.replace("\\|", "|")
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)  # links: their text
    out = []
    for i, part in enumerate(re.split(r"`([^`]*)`", text)):
        part = part.replace("\\", "\\e").replace("-", "\\-")
        if not i % 2:
            part = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", part)
            part = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\\fI\1\\fR", part)
        out.append(f"\\fB{part}\\fR" if i % 2 else part)
    line = "".join(out)
    return "\\&" + line if line.startswith((".", "'")) else line


def cells(row):
    row = row.strip().strip("|")
    return [c.strip() for c in re.split(r"(?<!\\)\|", row)]


def main():
    path, name, section, title, version = sys.argv[1:6]
    lines = open(path, encoding="utf-8").read().splitlines()
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))
    date = time.strftime("%Y-%m-%d", time.gmtime(epoch))
    out = [f'.TH {name.upper()} {section} {date} "ddpctl {version}" "{title}"']
    out.append(f".SH NAME\n{name} \\- {inline(lines[0].lstrip('# ').strip().lower())}")
    i, in_code, header = 1, False, None
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            out.append(".EX" if not in_code else ".EE")
            in_code = not in_code
        elif in_code:
            out.append(inline(line) if line.strip() else "")
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            text = inline(line.lstrip("# ").strip())
            out.append(f".SH {text.upper()}" if level <= 2 else f".SS {text}")
        elif line.startswith("|"):
            row = cells(line)
            if header is None:
                header = row
            elif not all(re.fullmatch(r":?-+:?", c) for c in row):
                out.append(".TP\n" + "\\fB" + inline(row[0]) + "\\fR")
                rest = [f"{h}: {inline(c)}" if h and j < len(row) - 1 else inline(c)
                        for j, (h, c) in enumerate(zip(header[1:], row[1:]), start=1)]
                out.append("; ".join(r for r in rest if r))
        elif re.match(r"^\s*[-*] ", line):
            out.append(".IP \\(bu 2\n" + inline(re.sub(r"^\s*[-*] ", "", line)))
        elif not line.strip():
            header = None
            out.append(".PP")
        else:
            out.append(inline(line.strip()))
        i += 1
    print("\n".join(out))


main()
