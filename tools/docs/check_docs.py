#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs every command the given Markdown pages show and checks the output they show against what
the command prints now.

  check_docs.py --source SRC --build BUILD FILE.md [FILE.md ...]

The convention (docs/developer-guide.md#documentation):

* A fenced block whose info string is `console` holds commands, each line starting with "$ ",
  each followed by the output shown. A trailing "\\" continues a command on the next line, and
  so does a next line starting with "> " (bash's secondary prompt, in a multi-line quoted
  string). Blocks of any other kind (`sh`, `text`, `json`, ...) are not run.
* Each console block runs in a fresh scratch folder (a tempfile folder) in which `build` is a
  symlink to BUILD and every top-level entry of SRC but `build`, `out`, `models` and hidden ones
  (so `configs`, `tools`, `tests`, ...) is a symlink into SRC: `build/ipusim run
  configs/default.json` works and its out/ lands in the scratch folder, never in SRC. The block's
  commands run in order in that folder, each with `bash -c`, stderr merged into stdout as a
  terminal shows them, PYTHONPATH=build/python, and `python3` on the PATH being the Python the
  build made its module for (IPUSIM_PYTHON in BUILD/CMakeCache.txt).
* Every command must exit 0 (show a failing one as `cmd; echo "exit code $?"`).
* The shown output is compared with the real output line by line, after collapsing runs of
  white space and stripping both ends of each line; blank lines ending either are ignored. A
  line "..." on its own skips any number of real lines; every other shown line must equal a real
  line, in order, and consecutive shown lines must be consecutive real lines. Without a leading
  (trailing) "...", the first (last) shown line must be the first (last) real line. A command
  with no output shown is only run.

On a failure it prints the page, the line of the command in it, the command, the shown line and
the nearest real line, and exits 1. It exits 0 when every block passes, 2 on bad usage.

With --needs MODULE (repeatable), the check is skipped (exit 77, which ctest reports as skipped)
when the build's Python cannot import MODULE: a page whose commands need torch cannot run
without it.

With --update, the shown output of each command that differs and shows its output whole (no
"...") is replaced in the page by the real output; a command that elides lines is only
reported, for a person to edit.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP = "..."
LEFT_OUT = {"build", "out", "models"}


class Command:
    def __init__(self, line, text):
        self.line = line  # line of its "$ " in the page, 1-based
        self.text = text
        self.shown = []  # (page line, text) of the output shown


class Block:
    def __init__(self, page, line):
        self.page = page
        self.line = line  # line of the opening fence
        self.commands = []


def parse(page):
    """The console blocks of a Markdown page."""
    blocks, block, fence = [], None, None
    lines = Path(page).read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if fence is None:
            match = re.match(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)", raw)
            if match:
                fence = match.group(2)
                if match.group(3) == "console":
                    block = Block(page, i + 1)
                    blocks.append(block)
            i += 1
            continue
        if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
            fence, block = None, None
            i += 1
            continue
        if block is not None:
            if stripped.startswith("$ ") or stripped == "$":
                start = i
                text = stripped[2:]
                while i + 1 < len(lines):
                    following = lines[i + 1].strip()
                    if text.endswith("\\"):  # continued by a trailing backslash
                        text = text + "\n" + lines[i + 1]
                    elif following.startswith("> ") or following == ">":  # bash's secondary prompt
                        text = text + "\n" + following[2:]
                    else:
                        break
                    i += 1
                block.commands.append(Command(start + 1, text))
            elif block.commands:
                block.commands[-1].shown.append((i + 1, raw))
            elif stripped:
                raise SystemExit(f"{page}:{i + 1}: output before the first command of the console block at line {block.line}")
        i += 1
    if fence is not None:
        raise SystemExit(f"{page}: a code block is not closed")
    return blocks


def norm(line):
    return " ".join(line.split())


def match(shown, real):
    """None when the shown lines match the real ones, else (k, r): k the index into `shown` of the
    first line that does not match (None: every shown line matched, but the real output goes on
    past the last one), r the index into `real` where it was looked for."""
    shown = [norm(t) for _, t in shown]
    while shown and not shown[-1]:
        shown.pop()  # blank lines closing the block
    real = [norm(t) for t in real]
    while real and not real[-1]:
        real.pop()  # a blank line ending the output, as --help prints
    lead = bool(shown) and shown[0] == SKIP
    trail = bool(shown) and shown[-1] == SKIP
    segments, current = [], []
    for k, text in enumerate(shown):
        if text == SKIP:
            if current:
                segments.append(current)
            current = []
        else:
            current.append(k)
    if current:
        segments.append(current)
    pos = 0
    for s, segment in enumerate(segments):
        texts = [shown[k] for k in segment]
        anchored_start = s == 0 and not lead
        anchored_end = s == len(segments) - 1 and not trail
        starts = [0] if anchored_start else range(pos, len(real) - len(texts) + 1)
        if anchored_end:
            starts = [t for t in starts if t == len(real) - len(texts)]
        found = next((t for t in starts if real[t:t + len(texts)] == texts), None)
        if found is None:
            # Where the most of this segment matches: its next line is the one that differs.
            best_k, best_at = 0, pos
            for t in ([0] if anchored_start else range(pos, len(real))):
                k = 0
                while k < len(texts) and t + k < len(real) and real[t + k] == texts[k]:
                    k += 1
                if k > best_k:
                    best_k, best_at = k, t
            if best_k == len(texts):  # all of it matched, but not at the end of the output
                return None, best_at + best_k
            return segment[best_k], best_at + best_k
        pos = found + len(texts)
    return None


def nearest(text, real):
    """The real line most like `text`."""
    best, score = "(no output)", -1.0
    for line in real:
        ratio = difflib.SequenceMatcher(None, norm(text), norm(line)).ratio()
        if ratio > score:
            best, score = line, ratio
    return best


def build_python(build):
    """The Python the build made its module for (IPUSIM_PYTHON in its CMake cache)."""
    try:
        for line in (Path(build) / "CMakeCache.txt").read_text().splitlines():
            if line.startswith("IPUSIM_PYTHON:"):
                return line.split("=", 1)[1]
    except OSError:
        pass
    return None


def scratch_folder(source, build, python):
    folder = Path(tempfile.mkdtemp(prefix="check_docs_"))
    (folder / "build").symlink_to(Path(build).resolve())
    for entry in sorted(Path(source).resolve().iterdir()):
        if entry.name.startswith(".") or entry.name in LEFT_OUT:
            continue
        (folder / entry.name).symlink_to(entry)
    if python:
        (folder / ".bin").mkdir()
        (folder / ".bin" / "python3").symlink_to(python)
    return folder


def run_block(block, args, python, updates):
    """Runs a block's commands; returns the failure messages (empty when it passes). With
    --update, (command, real output) of each command whose whole shown output differs is added
    to `updates` instead."""
    folder = scratch_folder(args.source, args.build, python)
    env = dict(os.environ, PYTHONPATH="build/python")
    if python:
        env["PATH"] = f"{folder / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    failures = []
    try:
        for command in block.commands:
            started = time.monotonic()
            try:
                done = subprocess.run(["bash", "-c", command.text], cwd=folder, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=args.timeout)
                output, code = done.stdout.decode("utf-8", "replace"), done.returncode
            except subprocess.TimeoutExpired as e:
                output, code = (e.stdout or b"").decode("utf-8", "replace"), f"a timeout after {args.timeout} s"
            seconds = time.monotonic() - started
            real = output.splitlines()
            where = f"{block.page}:{command.line} (console block at line {block.line})"
            if args.verbose:
                print(f"  {where}: {seconds:.2f} s: $ {command.text.splitlines()[0]}")
            if code != 0:
                tail = "\n".join("      " + line for line in real[-15:])
                failures.append(f"{where}: the command exited {code}\n    $ {command.text}\n    its output ended:\n{tail}")
                break
            mismatch = match(command.shown, real)
            if mismatch is not None and args.update and command.shown and all(norm(t) != SKIP for _, t in command.shown) \
                    and writable(real):
                updates.append((command, real))
                continue
            if mismatch is not None:
                k, at = mismatch
                if k is None:
                    failures.append(f"{where}: the output goes on after the last line shown (end the block with a line '...')\n"
                                    f"    $ {command.text}\n    next real line: {real[at].strip() if at < len(real) else ''}")
                else:
                    page_line, text = command.shown[k]
                    there = real[at].strip() if at < len(real) else "(the output ends)"
                    failures.append(f"{where}: the output differs\n    $ {command.text}\n"
                                    f"    shown (line {page_line}):  {text.strip()}\n"
                                    f"    real line {at + 1} in its place: {there}\n"
                                    f"    nearest real line:     {nearest(text, real).strip()}")
                if args.verbose:
                    failures[-1] += "\n    real output:\n" + "\n".join("      " + line for line in real)
    finally:
        if args.keep:
            print(f"  kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    return failures


def writable(real):
    """Whether output can be written into a console block and read back as the same output: no
    line that the block's syntax would take for something else (a skip, a command, a fence, or a
    continuation of the command)."""
    if real and real[0].strip().startswith("> "):
        return False
    return not any(norm(line) == SKIP or line.strip().startswith("$ ") or line.strip().startswith(("```", "~~~"))
                   for line in real)


def rewrite(page, updates):
    """The page with each command's shown output replaced by its real output, indented as the
    command is."""
    lines = Path(page).read_text(encoding="utf-8").splitlines(keepends=True)
    for command, real in sorted(updates, key=lambda u: -u[0].line):  # from the end: line numbers hold
        first, last = command.shown[0][0], command.shown[-1][0]
        while last > first and not lines[last - 1].strip():
            last -= 1  # blank lines closing the block stay
        dollar = lines[command.line - 1]
        indent = dollar[:len(dollar) - len(dollar.lstrip())]
        while real and not real[-1].strip():
            real = real[:-1]
        lines[first - 1:last] = [f"{indent}{text}".rstrip() + "\n" for text in real]
    Path(page).write_text("".join(lines), encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="The convention is in this script's docstring and docs/developer-guide.md.")
    parser.add_argument("--source", required=True, help="the source tree (configs/, tools/, tests/ ...)")
    parser.add_argument("--build", required=True, help="the build folder (ipusim, python/)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds a command may take (default 300)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders")
    parser.add_argument("--needs", action="append", default=[], metavar="MODULE",
                        help="skip (exit 77) when the build's Python cannot import MODULE")
    parser.add_argument("--update", action="store_true",
                        help="replace the shown output of each command that differs and shows it whole (no '...') by the real one")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each command with its time, and whole outputs on a mismatch")
    parser.add_argument("pages", nargs="+", metavar="FILE.md")
    args = parser.parse_args()
    if not (Path(args.build) / "ipusim").exists():
        print(f"{args.build}/ipusim: no such program (build first)", file=sys.stderr)
        return 2
    python = build_python(args.build)
    for module in args.needs:
        if subprocess.run([python or sys.executable, "-c", f"import {module}"], capture_output=True).returncode != 0:
            print(f"SKIPPED: the build's Python ({python or sys.executable}) cannot import {module}, which these pages need")
            return 77
    failed = blocks = commands = 0
    for page in args.pages:
        updates = []
        for block in parse(page):
            blocks += 1
            commands += len(block.commands)
            started = time.monotonic()
            failures = run_block(block, args, python, updates)
            status = "FAILED" if failures else "ok"
            print(f"{page}:{block.line}: {status} ({len(block.commands)} command{'s' * (len(block.commands) != 1)}, "
                  f"{time.monotonic() - started:.1f} s)")
            for failure in failures:
                print(failure)
            failed += bool(failures)
        if updates:
            rewrite(page, updates)
            print(f"{page}: updated the output of {len(updates)} command{'s' * (len(updates) != 1)}")
    if blocks == 0:
        print(f"no console blocks in {', '.join(args.pages)}: nothing to check")
        return 1
    print(f"{blocks} console blocks, {commands} commands in {len(args.pages)} page{'s' * (len(args.pages) != 1)}: "
          + (f"{failed} failed" if failed else "all match"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
