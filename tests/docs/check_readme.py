#!/usr/bin/env python3
"""README.md and docs/*.md say what the program does.

Over README.md and every docs/*.md page:
- Links: every relative link (`[text](path)`, `[text](path#anchor)`, `[text](#anchor)`,
  images too) names a file or directory that exists, and its anchor a heading of that page.
- Error lines: every `perflow: error: ...` line shown outside a command block is printed by
  some golden case (tests/golden/*/expected.stderr).
- Command blocks are run (the convention below).
And on the pages that hold them:
- docs/report.md: its first JSON block equals the golden report of examples/1f1b.json
  wherever it shows a value ("..." in an array stands for the rest).
- Tables of runs: a table right after a `<!-- check: runs -->` line links a config in each
  row's first cell; its `step`, `throughput` and `MFU` cells are what `perflow simulate` of
  that config reports (iteration_time_ns, tokens_per_s and model_tflops_per_gpu, mfu),
  rounded as the table rounds them: a result that changes changes its table.
- docs/cli.md: every `perflow <verb>` of its "## Synopsis" block is a verb `perflow --help`
  lists, and every listed verb is in the synopsis.

Command blocks. A fenced block whose language is sh, bash, console or shell is run:
- Its lines starting with `$ ` are commands; the lines after one, up to the next command or
  the end of the block, are the output it shows. A line `...` stands for any lines; each run
  of shown lines between `...` lines must appear in that order, line for line (trailing
  spaces aside), in what the command prints (standard output and error together).
- In a block without any `$ ` line, every line that is neither blank nor a `#` comment is a
  command whose output is not shown.
- A command is run with bash (so `VAR=value perflow ...`, `{a,b}` and redirections work)
  with the perflow under test first on PATH, in a fresh temporary directory holding a copy
  of examples/ and an empty docs/, so that nothing in the source tree is written. It must
  run `perflow` (after any VAR=value words) and exit with 0.
- An HTML comment on the line right before the fence changes that, options separated by `;`:
    <!-- check: skip: REASON -->   not run (make, Slurm, cmake, pip: say why); use sparingly
    <!-- check: fails -->           every command must exit with a code other than 0
    <!-- check: in DIR -->          run in a temporary copy of DIR (relative to the source
                                    directory) instead, e.g. a golden case's inputs
    <!-- check: as CASE -->         not run: the block's one command is golden case CASE's
                                    (tests/golden/CASE/args, paths relative to the source
                                    directory, a `--jobs N` aside), and the output it shows is
                                    in the case's expected output; for a command too slow to
                                    run twice under the sanitizers
- A `$ ` line in a fenced block without a language is an error: label the block.
Python blocks are not run (the module may not be built where this runs).

usage: check_readme.py PERFLOW SOURCE_DIR
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from markdown_blocks import blocks

perflow, source = os.path.abspath(sys.argv[1]), pathlib.Path(sys.argv[2]).resolve()
pages = [source / "README.md"] + sorted((source / "docs").glob("*.md"))
texts = {page: page.read_text() for page in pages}
failures, passed = [], 0
SHELLS = {"sh", "bash", "console", "shell"}


def check(condition, message):
    global passed
    if condition:
        passed += 1
    else:
        failures.append(message)
        print("FAIL:", message)
    return bool(condition)


def name(page):
    return str(page.relative_to(source))


def outside_blocks(text):
    """The page's lines that are not inside a fenced block."""
    kept, inside = [], False
    for line in text.splitlines():
        if re.match(r"^\s*```", line):
            inside = not inside
        elif not inside:
            kept.append(line)
    return kept


def slug(heading):
    heading = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return heading.replace(" ", "-")


def anchors(page):
    seen, result = {}, set()
    for line in outside_blocks(texts.get(page) or page.read_text()):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            result.add(base if count == 0 else f"{base}-{count}")
    return result


# Links.
for page in pages:
    text = "\n".join(outside_blocks(texts[page]))
    text = re.sub(r"`[^`]*`", "", text)
    for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            check(False, f"{name(page)}: link to {target}: no such file")
            continue
        if anchor:
            check(file.suffix == ".md" and anchor in anchors(file),
                  f"{name(page)}: link to {target}: no heading with that anchor")
        else:
            check(True, "")

# Error lines shown outside command blocks.
stderr = "".join(p.read_text() for p in (source / "tests/golden").glob("*/expected.stderr"))
error_lines = []
for page in pages:
    run_lines = {line.strip() for language, _, body, _ in blocks(texts[page])
                 if language in SHELLS for line in body}
    error_lines += [(page, line.strip()) for line in texts[page].splitlines()
                    if line.strip().startswith("perflow: error: ")
                    and line.strip() not in run_lines]
check(len(error_lines) >= 3, f"the docs show only {len(error_lines)} error lines")
for page, line in error_lines:
    check(line in stderr, f"{name(page)}: this error line is printed by no golden case: {line}")


# The report example.
def matches(shown, actual, where):
    if isinstance(shown, dict):
        check(isinstance(actual, dict), f"{where}: docs/report.md shows an object")
        for key, value in shown.items():
            check(key in actual, f"{where}/{key}: docs/report.md shows a field the report lacks")
            if key in actual:
                matches(value, actual[key], f"{where}/{key}")
    elif isinstance(shown, list):
        check(isinstance(actual, list), f"{where}: docs/report.md shows an array")
        for i, value in enumerate(shown):
            if value == "...":
                return
            check(i < len(actual), f"{where}/{i}: beyond the report's array")
            if i < len(actual):
                matches(value, actual[i], f"{where}/{i}")
    else:
        check(shown == actual,
              f"{where}: docs/report.md shows {shown!r}, the report has {actual!r}")


report_page = source / "docs/report.md"
report_block = next("\n".join(body) for language, _, body, _ in blocks(texts[report_page])
                    if language == "json")
golden = json.loads((source / "tests/golden/simulate_1f1b_example/expected.out.report.json")
                    .read_text())
matches(json.loads(report_block), golden, "")

# Tables of runs.
RUN_COLUMNS = {
    "step": lambda r: f"{r['iteration_time_ns'] / 1e9:.2f} s",
    "throughput": lambda r: (f"{r['tokens_per_s'] / 1000:.0f}k tokens/s, "
                             f"{r['model_tflops_per_gpu']:.1f} TFLOP/s per GPU"),
    "MFU": lambda r: f"{r['mfu'] * 100:.1f}%",
}


def run_tables(text):
    """The tables after a `<!-- check: runs -->` line: (first line number, rows of cells)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not re.match(r"^\s*<!--\s*check:\s*runs\s*-->\s*$", line):
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        first, rows = j + 1, []
        while j < len(lines) and lines[j].startswith("|"):
            rows.append([cell.strip() for cell in lines[j].strip().strip("|").split("|")])
            j += 1
        yield first, rows


with tempfile.TemporaryDirectory() as work:
    for page in pages:
        for first, rows in run_tables(texts[page]):
            where = f"{name(page)}:{first}"
            if not check(len(rows) > 2, f"{where}: `check: runs` needs a table after it"):
                continue
            header, body = rows[0], rows[2:]
            columns = [k for k, cell in enumerate(header) if cell in RUN_COLUMNS]
            check(columns, f"{where}: the table has none of the columns "
                           f"{', '.join(RUN_COLUMNS)}")
            for offset, cells in enumerate(body):
                row_where = f"{name(page)}:{first + 2 + offset}"
                link = re.search(r"\]\(([^)\s]+\.json)\)", cells[0])
                if not check(link, f"{row_where}: the first cell links no config"):
                    continue
                report = pathlib.Path(work) / "report.json"
                result = subprocess.run(
                    [perflow, "simulate", str((page.parent / link.group(1)).resolve()),
                     "--report", str(report)], capture_output=True, text=True)
                if not check(result.returncode == 0,
                             f"{row_where}: perflow simulate {link.group(1)} failed: "
                             f"{result.stderr.strip()}"):
                    continue
                figures = json.loads(report.read_text())
                for k in columns:
                    expected = RUN_COLUMNS[header[k]](figures)
                    check(k < len(cells) and cells[k] == expected,
                          f"{row_where}: the {header[k]} cell says "
                          f"'{cells[k] if k < len(cells) else ''}', perflow simulate "
                          f"{link.group(1)} gives '{expected}'")

# The synopsis.
help_text = subprocess.run([perflow, "--help"], capture_output=True, text=True).stdout
verbs = set(re.findall(r"^  ([a-z][a-z-]+)\s", help_text.split("SUBCOMMANDS:")[-1], re.M))
synopsis = re.search(r"^## Synopsis\n\n```\n(.*?)```", texts[source / "docs/cli.md"],
                     re.S | re.M).group(1)
shown = set(re.findall(r"^perflow ([a-z][a-z-]+)", synopsis, re.M))
check(len(verbs) >= 7, f"perflow --help lists {sorted(verbs)}")
check(verbs == shown, f"docs/cli.md synopsis {sorted(shown)} != perflow --help {sorted(verbs)}")


# Command blocks.
def appears(shown, actual):
    """Each run of shown lines between `...` lines appears, in order, in the actual ones."""
    at = 0
    segments, segment = [], []
    for line in shown + ["..."]:
        if line.strip() == "...":
            if segment:
                segments.append(segment)
            segment = []
        else:
            segment.append(line.rstrip())
    for segment in segments:
        while at + len(segment) <= len(actual) and actual[at:at + len(segment)] != segment:
            at += 1
        if at + len(segment) > len(actual):
            return segment[0]
        at += len(segment)
    return None


bin_dir = pathlib.Path(tempfile.mkdtemp(prefix="perflow_docs_bin_"))
(bin_dir / "perflow").symlink_to(perflow)
environment = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
ran = skipped = from_golden = 0
for page in pages:
    for language, line, body, marker in blocks(texts[page]):
        where = f"{name(page)}:{line}"
        if language not in SHELLS:
            for text in body:
                check(not text.startswith("$ "),
                      f"{where}: a `$ ` command in a block without a language: label it ```sh")
            continue
        options = [o.strip() for o in (marker or "").split(";") if o.strip()]
        expect_failure, directory, skip, golden_case = False, None, None, None
        for option in options:
            if option.startswith("skip:") and option[5:].strip():
                skip = option[5:].strip()
            elif option == "fails":
                expect_failure = True
            elif option.startswith("in ") and (source / option[3:].strip()).is_dir():
                directory = source / option[3:].strip()
            elif option.startswith("as ") and (source / "tests/golden" / option[3:].strip()
                                               / "args").is_file():
                golden_case = source / "tests/golden" / option[3:].strip()
            else:
                check(False, f"{where}: unknown check option '{option}' (skip: REASON, fails, "
                             "in DIR with DIR a directory of the source, as CASE with CASE "
                             "a golden case)")
        if skip:
            skipped += 1
            continue
        commands = []  # (command, shown output lines)
        if any(text.startswith("$ ") for text in body):
            check(body[0].startswith("$ "), f"{where}: output shown before any `$ ` command")
            for text in body:
                if text.startswith("$ "):
                    commands.append((text[2:], []))
                elif commands:
                    commands[-1][1].append(text)
        else:
            commands = [(text, []) for text in body if text.strip() and not text.startswith("#")]
        check(bool(commands), f"{where}: a {language} block without commands")
        if golden_case:
            check(len(commands) == 1, f"{where}: a block `as` a golden case has one command")
            args = [a.replace("../../../", "") for a in
                    (golden_case / "args").read_text().split()]
            if "--jobs" in args:
                del args[args.index("--jobs"):args.index("--jobs") + 2]
            command, output = commands[0]
            check(command.split() == ["perflow"] + args,
                  f"{where}: `{command}` is not the command of {golden_case.name}: "
                  f"perflow {' '.join(args)}")
            expected = "".join((golden_case / f"expected.{s}").read_text()
                               for s in ("stdout", "stderr")).replace("../../../", "")
            missing = appears(output, [l.rstrip() for l in expected.splitlines()])
            check(missing is None, f"{where}: golden case {golden_case.name} does not print "
                                   f"what the page shows, from: {missing}")
            from_golden += 1
            continue
        work = pathlib.Path(tempfile.mkdtemp(prefix="perflow_docs_"))
        try:
            if directory:
                cwd = work / directory.name
                shutil.copytree(directory, cwd)
            else:
                cwd = work
                shutil.copytree(source / "examples", work / "examples")
                (work / "docs").mkdir()
            for command, output in commands:
                words = [w for w in command.split() if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]
                if not (words and words[0] == "perflow"):
                    check(False, f"{where}: `{command}` does not run perflow; mark the block "
                                 "<!-- check: skip: REASON --> if it cannot run here")
                    continue
                ran += 1
                result = subprocess.run(["bash", "-c", command], cwd=cwd, env=environment,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, timeout=300)
                if expect_failure:
                    check(result.returncode != 0, f"{where}: `{command}` succeeded; the block "
                                                  "is marked as failing")
                else:
                    check(result.returncode == 0, f"{where}: `{command}` exited with "
                                                  f"{result.returncode}:\n{result.stdout[-2000:]}")
                missing = appears(output, [l.rstrip() for l in result.stdout.splitlines()])
                check(missing is None, f"{where}: `{command}` does not print what the page "
                                       f"shows, from: {missing}\nit printed:\n"
                                       f"{result.stdout[-3000:]}")
        finally:
            shutil.rmtree(work)
shutil.rmtree(bin_dir)
check(ran >= 8, f"only {ran} documented commands ran")

print(f"{passed} passed, {len(failures)} failed; {ran} commands run, {from_golden} shown by "
      f"golden cases, {skipped} blocks skipped")
sys.exit(1 if failures else 0)
