#!/usr/bin/env python3
"""Extracts the ```swift blocks of the documentation for .ci/doc-snippets.

Usage: doc-snippets.py <output-dir> <markdown file>...

Every ```swift block must follow a marker on the line just before it, an HTML comment that
GitHub and DocC do not show. It lists the preludes (Tests/DocSnippets/<Name>.swift) that declare
the placeholders the block assumes, and options:

  <!-- snippet -->                      self-contained: checked after `import Strata` alone
  <!-- snippet: Server, Users -->       checked after Server.swift and Users.swift
  <!-- snippet: Users, in: registry --> the block is the body of `Container { registry in … }`
  <!-- snippet: Users, as: setup -->    names the block, so that a later block of the same file
  <!-- snippet: Logging, after: setup --> is checked after it (and its preludes), in one file
  <!-- snippet: expect: warning -->     must compile with the warning that the block shows in a
                                        `// warning: <text>` comment (otherwise no warning)
  <!-- snippet: skip (reason) -->       not checked; listed with its reason

Writes one Swift file per checked block into the output directory, with `#sourceLocation`
directives that map every line back to its markdown or prelude file, and prints one line per
block: `check <swift file> <markdown>:<line> clean` (or `… warning <text>`), or
`skip <markdown>:<line> <reason>`. A block without a valid marker is an error that names its
file and line (exit status 1).
"""

import os
import re
import sys

PRELUDE_DIR = "Tests/DocSnippets"
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)")
MARKER = re.compile(r"^\s*<!--\s*snippet(?::\s*(.*?))?\s*-->\s*$")
SHOWN_WARNING = re.compile(r"^\s*// warning: (.+?)\s*$")
WRAPPERS = {
    "registry": ("let _ = try Container { registry in", "}"),
}


class MarkerError(Exception):
    pass


def blocks(path):
    """Yields (line of the fence, the line before it, code lines) for each ```swift block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, language = len(match.group(1)), match.group(2), match.group(3)
        start = i
        i += 1
        code = []
        while i < len(lines):
            closing = lines[i].strip()
            if closing.startswith(fence) and set(closing) == {fence[0]}:
                break
            line = lines[i]
            # Content inside an indented fence (a list item's) loses up to the fence's indentation.
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            code.append(line[strip:])
            i += 1
        i += 1
        if language.lower() == "swift":
            marker = lines[start - 1] if start > 0 else ""
            yield start + 1, marker, code


def parse_marker(text):
    """Returns None for a skip, else (preludes, options)."""
    match = MARKER.match(text)
    if not match:
        raise MarkerError("has no `<!-- snippet: … -->` marker on the line before it")
    spec = (match.group(1) or "").strip()
    if spec.startswith("skip"):
        reason = spec[len("skip"):].strip()
        if not (reason.startswith("(") and reason.endswith(")") and len(reason) > 2):
            raise MarkerError("skip marker needs a reason: `<!-- snippet: skip (why) -->`")
        return None, reason[1:-1]
    preludes, options = [], {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        if ":" in item:
            key, value = (part.strip() for part in item.split(":", 1))
            if key not in ("in", "as", "after", "expect") or not value or key in options:
                raise MarkerError(f"marker has an unknown or repeated option `{item}`")
            if key == "in" and value not in WRAPPERS:
                raise MarkerError(f"unknown wrapper `in: {value}` (known: {', '.join(WRAPPERS)})")
            if key == "expect" and value != "warning":
                raise MarkerError(f"unknown expectation `expect: {value}` (known: warning)")
            options[key] = value
        elif re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", item):
            if not os.path.isfile(os.path.join(PRELUDE_DIR, item + ".swift")):
                raise MarkerError(f"names a prelude `{item}`, but there is no {PRELUDE_DIR}/{item}.swift")
            preludes.append(item)
        else:
            raise MarkerError(f"marker has an unreadable item `{item}`")
    return preludes, options


def location(path, line):
    return [f'#sourceLocation(file: "{path}", line: {line})']


def main():
    outdir, paths = sys.argv[1], sys.argv[2:]
    errors = 0
    count = 0
    used = set()
    for path in paths:
        named = {}  # `as:` name -> (preludes, code with locations)
        for line, marker, code in blocks(path):
            where = f"{path}:{line}"
            try:
                parsed, extra = parse_marker(marker)
                if parsed is None:
                    print(f"skip {where} {extra}")
                    continue
                preludes, options = parsed, extra
                body = []
                if "after" in options:
                    if options["after"] not in named:
                        raise MarkerError(f"`after: {options['after']}` names no earlier block of {path}")
                    earlier_preludes, earlier_body = named[options["after"]]
                    preludes = earlier_preludes + [p for p in preludes if p not in earlier_preludes]
                    body += earlier_body
                opening, closing = WRAPPERS.get(options.get("in"), (None, None))
                if opening:
                    body.append(opening)
                body += location(path, line + 1) + code + ["#sourceLocation()"]
                if closing:
                    body.append(closing)
                if "as" in options:
                    if options["as"] in named:
                        raise MarkerError(f"`as: {options['as']}` names an earlier block of {path} too")
                    named[options["as"]] = (preludes, body)
                expectation = "clean"
                if "expect" in options:
                    # The block shows the warning in a comment: `// warning: <its first words>`.
                    shown = [m.group(1) for m in map(SHOWN_WARNING.match, code) if m]
                    if not shown:
                        raise MarkerError("with `expect: warning` must show it: `// warning: <text>`")
                    expectation = "warning " + shown[0]
            except MarkerError as error:
                print(f"{where}: error: ```swift block {error}", file=sys.stderr)
                errors += 1
                continue
            used.update(preludes)
            text = [f"// {where}, generated by .ci/doc-snippets", "import Strata"]
            for prelude in preludes:
                prelude_path = os.path.join(PRELUDE_DIR, prelude + ".swift")
                with open(prelude_path, encoding="utf-8") as f:
                    text += location(prelude_path, 1) + f.read().rstrip("\n").split("\n")
                text.append("#sourceLocation()")
            text += body
            count += 1
            name = os.path.join(outdir, f"{count:03d}-{os.path.basename(path)[:-3]}-{line}.swift")
            with open(name, "w", encoding="utf-8") as f:
                f.write("\n".join(text) + "\n")
            print(f"check {name} {where} {expectation}")
    unused = sorted(set(os.listdir(PRELUDE_DIR)) - {name + ".swift" for name in used})
    for name in unused:
        print(f"{PRELUDE_DIR}/{name}: error: no block uses this prelude", file=sys.stderr)
        errors += 1
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
