#!/usr/bin/env python3
"""Extracts and type-checks the ```swift blocks of the documentation for .ci/doc-snippets.

Usage: doc-snippets.py <output-dir> <compiler command>...

Checks two kinds of examples, each as a Swift file in the output directory with `#sourceLocation`
directives that map every line back to its markdown, Swift source or prelude file:

1. The ```swift blocks of README.md and the DocC articles (Sources/*/Documentation.docc/*.md).
   Every one must follow a marker on the line just before it, an HTML comment that GitHub and
   DocC do not show. It lists the preludes (Tests/DocSnippets/<Name>.swift) that declare the
   placeholders the block assumes, and options:

     <!-- snippet -->                      self-contained: checked after `import Strata` alone
     <!-- snippet: Server, Users -->       checked after Server.swift and Users.swift
     <!-- snippet: Users, in: registry --> the block is the body of `Container { registry in … }`
     <!-- snippet: Users, as: setup -->    names the block, so that a later block of the same file
     <!-- snippet: Logging, after: setup --> is checked after it (and its preludes), in one file
     <!-- snippet: expect: warning -->     must compile with the warning that the block shows in a
                                           `// warning: <text>` comment (otherwise no warning)
     <!-- snippet: skip (reason) -->       not checked; listed with its reason

   Each block is checked on its own, in script mode.

2. The ```swift (or untagged ```) blocks of the `///` comments of Sources/**/*.swift, without
   markers (an indented code block there is an error: it would escape the check). All the blocks
   of one source file are checked in one file (library mode), each as the body of its own
   function (`async` if it awaits), after the doc-comment preludes of its module
   (DOC_COMMENT_PRELUDES): placeholders such as `container`, `registry`, `resolver`, `Logger`.
   A type the block declares shadows the prelude's. Conventions: `{ … }` is elided code (checked
   as `{ fatalError() }`); an `extension`, `protocol` or `import` at the start of a line is moved
   out of the function; a block that shows a `// warning: <text>` comment must compile with that
   warning; the unused-value warnings that the wrapping function causes are ignored. A block that
   cannot be checked is listed by `<file>:<line of its fence>` with a reason in EXCEPTIONS; an
   entry there that matches no block is an error.

Prints `ok`, `FAIL` (with the diagnostics) or `skip` per block, and exits with status 1 if a
block fails or a marker or exception is invalid; those name their file and line.
"""

import concurrent.futures
import glob
import os
import re
import subprocess
import sys

PRELUDE_DIR = "Tests/DocSnippets"
EXCEPTIONS = ".ci/doc-snippets-exceptions"
MARKDOWN = ["README.md", "Sources/*/Documentation.docc/*.md"]
# The preludes of the doc-comment examples of each target's directory, in order.
DOC_COMMENT_PRELUDES = {
    "Sources/Core/": ["DocComments", "DocCommentsCore"],
    "Sources/Modules/": ["DocComments", "DocCommentsModules"],
    "Sources/Testing/": ["DocComments", "DocCommentsTesting"],
}
PARALLEL = 2
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)")
MARKER = re.compile(r"^\s*<!--\s*snippet(?::\s*(.*?))?\s*-->\s*$")
SHOWN_WARNING = re.compile(r"^\s*// warning: (.+?)\s*$")
DOC_LINE = re.compile(r"^\s*///(.*)$")
ELIDED = re.compile(r"\{\s*…\s*\}")
HOISTED = re.compile(r"^(extension|protocol|import)\b")
DIAGNOSTIC = re.compile(r"^(.+?):(\d+):(\d+): (error|warning|note): (.*)$")
# Warnings caused by checking a block as a function body rather than as top-level code.
WRAPPING_WARNING = re.compile(
    r"^(initialization of (immutable value|variable) '[^']*' was never used"
    r"|immutable value '[^']*' was never used|variable '[^']*' was never (mutated|used))"
)
WRAPPERS = {
    "registry": ("let _ = try Container { registry in", "}"),
}


class MarkerError(Exception):
    pass


def code_blocks(lines, languages):
    """Yields (index of the fence, language, code lines) for each fenced block of `languages`."""
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
        if language.lower() in languages:
            yield start, language, code


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


def shown_warning(code):
    """The warning a block shows in a `// warning: <text>` comment (`…` ends a shortened one)."""
    shown = [m.group(1) for m in map(SHOWN_WARNING.match, code) if m]
    return shown[0].rstrip("…").rstrip() if shown else None


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


def prelude_text(preludes):
    text = []
    for prelude in preludes:
        prelude_path = os.path.join(PRELUDE_DIR, prelude + ".swift")
        text += location(prelude_path, 1) + read_lines(prelude_path)
        text[-1:] = ["#sourceLocation()"] if text[-1] == "" else [text[-1], "#sourceLocation()"]
    return text


class Block:
    """One example: where it is, the lines it spans there, and the warning it must show."""

    def __init__(self, path, line, first, last, warning):
        self.where = f"{path}:{line}"
        self.path, self.first, self.last, self.warning = path, first, last, warning
        self.problems, self.notes = [], []
        self.warned = False


class Job:
    """One Swift file to type-check, holding one or more blocks."""

    def __init__(self, name, blocks, flags, wrapped):
        self.name, self.blocks, self.flags, self.wrapped = name, blocks, flags, wrapped


def markdown_jobs(outdir, paths, used, counter):
    """The jobs of the markdown files' blocks; prints skips and marker errors."""
    jobs, errors = [], 0
    for path in paths:
        named = {}  # `as:` name -> (preludes, code with locations)
        lines = read_lines(path)
        for start, _, code in code_blocks(lines, ("swift",)):
            line = start + 1
            where = f"{path}:{line}"
            try:
                parsed, extra = parse_marker(lines[start - 1] if start > 0 else "")
                if parsed is None:
                    print(f"skip {where}: {extra}")
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
                warning = None
                if "expect" in options:
                    warning = shown_warning(code)
                    if not warning:
                        raise MarkerError("with `expect: warning` must show it: `// warning: <text>`")
            except MarkerError as error:
                print(f"{where}: error: ```swift block {error}", file=sys.stderr)
                errors += 1
                continue
            used.update(preludes)
            text = [f"// {where}, generated by .ci/doc-snippets", "import Strata"]
            text += prelude_text(preludes) + body
            name = write(outdir, counter, path, line, text)
            # A block checked after an earlier one answers for the earlier one's lines too.
            jobs.append(Job(name, [Block(path, line, 1, len(lines), warning)], [], False))
    return jobs, errors


def doc_comment_blocks(path, problems):
    """Yields (line of the fence, code lines) for each Swift block of the `///` comments of a file;
    appends what is wrong with the comments to `problems`."""
    lines = read_lines(path)
    i = 0
    while i < len(lines):
        if not DOC_LINE.match(lines[i]):
            i += 1
            continue
        start = i
        while i < len(lines) and DOC_LINE.match(lines[i]):
            i += 1
        comment = [DOC_LINE.match(line).group(1) for line in lines[start:i]]
        comment = [text[1:] if text.startswith(" ") else text for text in comment]
        problems += indented_code_blocks(path, start, comment)
        # A block without a language is checked too, so that no example escapes by omitting it.
        for fence, _, code in code_blocks(comment, ("swift", "")):
            if fence + 1 + len(code) >= len(comment):
                problems.append(f"{path}:{start + fence + 1}: error: ```swift block is not closed")
                continue
            yield start + fence + 1, code


def indented_code_blocks(path, start, comment):
    """Code blocks indented by four spaces after a paragraph, as errors: they would not be checked."""
    fence, errors = None, []
    for i, text in enumerate(comment):
        match = FENCE.match(text)
        if fence is None and match:
            fence = match.group(2)
        elif fence is not None:
            if text.strip().startswith(fence) and set(text.strip()) == {fence[0]}:
                fence = None
        elif i >= 2 and not comment[i - 1].strip() and text.startswith("    ") and text.strip():
            previous = next((line for line in reversed(comment[: i - 1]) if line.strip()), "")
            if previous == previous.lstrip() and not re.match(r"([-*+]|\d+\.)\s", previous):
                errors.append(f"{path}:{start + i + 1}: error: an indented code block is not "
                              "checked; fence it: ```swift … ```")
    return errors


def read_exceptions():
    """(`<file>`, first code line) -> (reason, line of the exceptions file).

    An entry is two lines, `<file>: <reason>` and `> <the block's first line of code>`: it names
    its block by that code, not by a line number, so that an edit elsewhere in the file does not
    move it."""
    exceptions = {}
    lines = [(number, text.strip()) for number, text in enumerate(read_lines(EXCEPTIONS), 1)]
    lines = [(number, text) for number, text in lines if text and not text.startswith("#")]
    for (number, head), (_, code) in zip(lines[::2], lines[1::2] + [(0, "")]):
        match = re.fullmatch(r"(Sources/\S+\.swift):\s+(\S.*)", head)
        key = (match.group(1), code[1:].strip()) if match and code.startswith(">") else None
        if key is None or not key[1] or key in exceptions:
            print(f"{EXCEPTIONS}:{number}: error: not `<file>: <reason>` followed by `> <first line of "
                  "code>`, or repeated", file=sys.stderr)
            raise SystemExit(1)
        exceptions[key] = (match.group(2), number)
    return exceptions


def first_code_line(code):
    """The block's first non-blank line, trimmed: what an exception names it by."""
    return next((text.strip() for text in code if text.strip()), "")


def elide(code):
    return [ELIDED.sub("{ fatalError() }", text) for text in code]


def function_body(path, line, code):
    """Splits a doc-comment block into top-level declarations and a function body (with locations)."""
    top, body = [], []
    i = 0
    while i < len(code):
        if HOISTED.match(code[i]):
            first, depth = i, 0
            while True:
                depth += code[i].count("{") - code[i].count("}")
                i += 1
                if depth <= 0 or i == len(code):
                    break
            top += location(path, line + 1 + first) + elide(code[first:i]) + ["#sourceLocation()"]
        else:
            first = i
            while i < len(code) and not HOISTED.match(code[i]):
                i += 1
            body += location(path, line + 1 + first) + elide(code[first:i]) + ["#sourceLocation()"]
    return top, body


def doc_comment_jobs(outdir, paths, used, counter):
    """The jobs of the doc-comment blocks (one per source file); prints exceptions and errors."""
    jobs, errors = [], 0
    exceptions = read_exceptions()
    matched = set()
    for path in paths:
        directory = next((d for d in DOC_COMMENT_PRELUDES if path.startswith(d)), None)
        problems = []
        found = list(doc_comment_blocks(path, problems))
        for problem in problems:
            print(problem, file=sys.stderr)
        errors += len(problems)
        blocks, top, functions = [], [], []
        for line, code in found:
            where = f"{path}:{line}"
            named = (path, first_code_line(code))
            if named in exceptions:
                matched.add(named)
                print(f"skip {where}: {exceptions[named][0]}")
                continue
            if directory is None:
                print(f"{where}: error: no doc-comment preludes for this directory (DOC_COMMENT_PRELUDES)",
                      file=sys.stderr)
                errors += 1
                continue
            hoisted, body = function_body(path, line, code)
            effects = "async throws" if any(re.search(r"\bawait\b", text) for text in code) else "throws"
            top += hoisted
            functions += [f"func example{len(blocks) + 1}() {effects} {{"] + body + ["}"]
            blocks.append(Block(path, line, line + 1, line + len(code), shown_warning(code)))
        if blocks:
            preludes = DOC_COMMENT_PRELUDES[directory]
            used.update(preludes)
            text = [f"// The doc-comment examples of {path}, generated by .ci/doc-snippets"]
            text += prelude_text(preludes) + top + functions
            name = write(outdir, counter, path, 0, text)
            jobs.append(Job(name, blocks, ["-parse-as-library"], True))
    for (path, first), (reason, number) in sorted(exceptions.items()):
        if (path, first) not in matched:
            print(f'{EXCEPTIONS}:{number}: error: no ```swift block of a doc comment in {path} starts '
                  f'with "{first}" (changed? then update the entry; gone? then remove it)', file=sys.stderr)
            errors += 1
    return jobs, errors


def write(outdir, counter, path, line, text):
    counter[0] += 1
    base = os.path.basename(path).rsplit(".", 1)[0]
    name = os.path.join(outdir, f"{counter[0]:03d}-{base}" + (f"-{line}" if line else "") + ".swift")
    with open(name, "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    return name


def run(job, command):
    result = subprocess.run(command + job.flags + [job.name], capture_output=True, text=True)
    return job, result.returncode, result.stdout + result.stderr


def evaluate(job, status, output):
    """Attributes each diagnostic to its block; returns the number of failed blocks."""
    stray = []
    for text in output.split("\n"):
        match = DIAGNOSTIC.match(text)
        if not match:
            continue
        path, line, kind, message = match.group(1), int(match.group(2)), match.group(4), match.group(5)
        block = next((b for b in job.blocks if b.path == path and b.first <= line <= b.last), None)
        if kind == "warning" and job.wrapped and WRAPPING_WARNING.match(message):
            continue
        if kind == "note":
            if block is not None:
                block.notes.append(text)
        elif block is None:
            stray.append(text)
        elif kind == "warning" and block.warning and message.startswith(block.warning):
            block.warned = True
        else:
            block.problems.append(text)
    failures = 0
    for block in job.blocks:
        if block.problems:
            print(f"FAIL {block.where} ({job.name}):")
            print("\n".join(block.problems + block.notes))
        elif block.warning and not block.warned:
            print(f"FAIL {block.where} compiles without the warning it shows: warning: {block.warning}")
            block.problems.append("warning missing")
        else:
            print(f"ok   {block.where}" + (f" warns: {block.warning}" if block.warning else ""))
        failures += bool(block.problems)
    if stray or (status != 0 and not failures):
        print(f"FAIL {job.name} (status {status}), outside the blocks:")
        print(output.rstrip() if not stray else "\n".join(stray))
        failures += 1 if failures == 0 else 0
    return failures


def main():
    outdir, command = sys.argv[1], sys.argv[2:]
    used, counter = set(), [0]
    markdown = [p for pattern in MARKDOWN for p in sorted(glob.glob(pattern))]
    sources = sorted(glob.glob("Sources/**/*.swift", recursive=True))
    jobs, errors = markdown_jobs(outdir, markdown, used, counter)
    more, more_errors = doc_comment_jobs(outdir, sources, used, counter)
    jobs, errors = jobs + more, errors + more_errors
    unused = sorted(set(os.listdir(PRELUDE_DIR)) - {name + ".swift" for name in used})
    for name in unused:
        print(f"{PRELUDE_DIR}/{name}: error: no block uses this prelude", file=sys.stderr)
        errors += 1
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        for job, status, output in pool.map(lambda job: run(job, command), jobs):
            failures += evaluate(job, status, output)
    checked = sum(len(job.blocks) for job in jobs)
    print(f"{checked} block(s) checked in {len(jobs)} file(s)")
    if failures:
        print(f"{failures} documentation example(s) failed to type-check", file=sys.stderr)
    if errors:
        print("invalid snippet markers, exceptions or preludes (see above)", file=sys.stderr)
    if failures or errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
