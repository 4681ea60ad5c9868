"""The fenced blocks of a Markdown page, with the check marker before each (the convention
of check_readme.py and check_python_blocks.py)."""
import re


def blocks(text):
    """Fenced blocks: (language, first line number, lines, marker comment or None)."""
    lines, found, i = text.splitlines(), [], 0
    while i < len(lines):
        opening = re.match(r"^(\s*)```(\S*)\s*$", lines[i])
        if not opening:
            i += 1
            continue
        indent, language, start, body = opening.group(1), opening.group(2), i + 1, []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        before = [line for line in lines[:start - 1] if line.strip()]
        marker = re.match(r"^\s*<!--\s*check:(.*?)-->\s*$", before[-1]) if before else None
        found.append((language, start, body, marker.group(1).strip() if marker else None))
        i += 1
    return found
