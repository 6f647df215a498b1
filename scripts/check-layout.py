#!/usr/bin/env python3
"""Fails when the source tree leaves the floors of the house that docs/layout.md draws.

Arrows point down only, and the engine is usable without bench/. Nothing in the compiler
enforces that: one convenient #include or target_link_libraries line and the store links
cuDNN. This checks four things, from the sources alone (no build needed):
  1. includes: every #include "..." in engine/, bench/ and cli/ names a folder its own floor
     may include from (FLOORS below; a floor may also include what those floors may include,
     and always its own folder; generated headers are named in GENERATED_HEADERS);
  2. links: the transitive closure of target_link_libraries (PUBLIC, PRIVATE and INTERFACE
     alike: a static library's private dependencies are linked too; generator expressions
     skipped) over the dlbench_* libraries of every CMakeLists.txt and cmake/*.cmake: the store
     and the report read results without linking the engine (dlbench_backend, dlbench_nn,
     dlbench_models);
  3. sizes: no *.h, *.cc, *.cu, *.cuh or *.py file in engine/, bench/, cli/, peers/, tests/ or
     scripts/ over 500 lines (files read top to bottom);
  4. engine hints: no string literal under engine/ names a CLI flag ("--word"); the CLI adds
     those hints, so the engine stays usable without it.
Known violations are allow-listed below, each with why and the step of
docs/plan-step-contract.md that removes it. An entry that matches nothing is an error too, so
the list only shrinks.

Usage: check-layout.py [--root DIR] [--allow-list FILE]
  --root        the tree to check (default: the checkout this script is in)
  --allow-list  a file in ALLOW_LIST's format that replaces the built-in list
Exit 0: clean; 1: violations or stale allow-list entries (each as FILE:LINE: problem);
2: bad usage, a root that is not a source tree, or a malformed allow-list.
"""

import argparse
import collections
import os
import re
import sys

MAX_LINES = 500
SIZED_EXTENSIONS = (".h", ".cc", ".cu", ".cuh", ".py")
SIZED_FOLDERS = ("engine", "bench", "cli", "peers", "tests", "scripts")
CXX_EXTENSIONS = (".h", ".cc", ".cu", ".cuh")
INCLUDE_FOLDERS = ("engine", "bench", "cli")
GENERATED_HEADERS = {"dlbench_git_hash.h"}  # engine/core/CMakeLists.txt writes it at build time
# The results and their readers name runs without the engine (and oneDNN, cuDNN, NCCL).
RESULT_READERS = ("dlbench_result", "dlbench_store", "dlbench_report")
ENGINE_LIBRARIES = ("dlbench_backend", "dlbench_dist", "dlbench_data", "dlbench_nn",
                    "dlbench_models", "dlbench_models_all")
EVERYTHING = "*"

# Which floors each floor includes from directly (docs/layout.md's floors; the table of
# docs/plan-step-contract.md, step 0). A floor may also include whatever these may include.
# engine/backend/cpu and engine/backend/cuda belong to the engine/backend floor.
FLOORS = {
    "engine/core": [],
    "engine/backend": ["engine/core"],
    "engine/dist": ["engine/core", "engine/backend"],
    "engine/data": ["engine/core", "engine/backend"],
    "engine/nn": ["engine/core", "engine/backend", "engine/dist", "engine/data"],
    "engine/models": ["engine/nn"],
    "bench/nvml": ["engine/core"],
    "bench/sysinfo": ["engine/core", "bench/nvml"],
    "bench/telemetry": ["engine/core", "bench/nvml", "bench/sysinfo"],
    "bench/result": ["engine/core", "bench/telemetry"],
    "bench/store": ["bench/result"],
    "bench/report": ["bench/store"],
    "bench/runner": ["engine/models", "bench/result", "bench/telemetry"],
    "bench/peers": ["bench/runner", "engine/models", "engine/nn"],
    "bench/suite": ["bench/runner", "bench/store"],
    # Micro-benchmarks drive the backends' devices directly and hand the store its records.
    "bench/micro": ["engine/backend", "bench/store"],
    # Benchmarks run by hand sit on top of the harness, beside the CLI (never on it).
    "bench/scripts": ["bench/runner", "bench/store", "bench/report", "bench/suite",
                      "bench/peers"],
    "cli": [EVERYTHING],
}

# Known violations. An entry is a line "check | file | subject", then an indented line naming
# the step of docs/plan-step-contract.md that removes it, then indented lines saying why.
# Subjects: include: the included path; link: "library -> engine library"; size: "-";
# hint: the string literal's text, trimmed.
ALLOW_LIST = """
"""
CHECKS = ("include", "link", "size", "hint")
STEP = re.compile(r"step \w+\b")

Finding = collections.namedtuple("Finding", "check file line subject problem")
Entry = collections.namedtuple("Entry", "check file subject step why where")


class UsageError(Exception):
    pass


def read(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def parse_allow_list(text, origin, first_line):
    entries = []
    for number, line in enumerate(text.splitlines(), first_line):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{origin}:{number}"
        if line[0].isspace():
            if not entries:
                raise UsageError(f"{where}: an indented line with no entry above it")
            last = entries[-1]
            if not last.step:
                entries[-1] = last._replace(step=line.strip())
            else:
                entries[-1] = last._replace(why=(last.why + " " + line.strip()).strip())
            continue
        fields = [field.strip() for field in line.split(" | ")]
        if len(fields) != 3 or fields[0] not in CHECKS:
            raise UsageError(f"{where}: want 'check | file | subject', check one of "
                             f"{', '.join(CHECKS)}")
        entries.append(Entry(*fields, step="", why="", where=where))
    for entry in entries:
        if not STEP.match(entry.step) or not entry.why:
            raise UsageError(f"{entry.where}: an allow-list entry needs an indented line naming "
                             f"the step that removes it ('step 1: ...'), then one saying why")
    return entries


def source_files(root, folders, extensions):
    for folder in folders:
        for base, dirs, names in os.walk(os.path.join(root, folder)):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for name in sorted(names):
                if name.endswith(extensions):
                    path = os.path.join(base, name)
                    yield os.path.relpath(path, root).replace(os.sep, "/"), path


def floor_of(path):
    """engine/backend/cuda/x.h -> engine/backend; cli/commands/x.cc -> cli; else None."""
    parts = path.split("/")
    if parts[0] == "cli" and len(parts) >= 2:
        return "cli"
    if parts[0] in ("engine", "bench") and len(parts) >= 3:
        return f"{parts[0]}/{parts[1]}"
    return None


def allowed_floors(floor):
    allowed, todo = {floor}, list(FLOORS.get(floor, []))
    while todo:
        below = todo.pop()
        if below == EVERYTHING:
            return None
        if below not in allowed:
            allowed.add(below)
            todo.extend(FLOORS.get(below, []))
    return allowed


INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def check_includes(root):
    findings = []
    for rel, path in source_files(root, INCLUDE_FOLDERS, CXX_EXTENSIONS):
        floor = floor_of(rel)
        if floor not in FLOORS:
            findings.append(Finding("include", rel, 1, "-", f"{os.path.dirname(rel)} is in no "
                                    f"floor of the layout table: add it to FLOORS in "
                                    f"scripts/check-layout.py (and to docs/layout.md)"))
            continue
        allowed = allowed_floors(floor)
        for number, line in enumerate(read(path).splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            included = match.group(1)
            if included in GENERATED_HEADERS:
                continue
            if "/" not in included and os.path.isfile(os.path.join(os.path.dirname(path),
                                                                   included)):
                continue  # its own folder, relative
            target = floor_of(included)
            if target is None:
                findings.append(Finding("include", rel, number, included,
                                        f"includes {included}, which is in no floor (include "
                                        f"from the repository root, e.g. engine/core/error.h)"))
            elif allowed is not None and target not in allowed:
                findings.append(Finding("include", rel, number, included,
                                        f"includes {included}: {floor} may include only from "
                                        f"{', '.join(sorted(allowed))}"))
    return findings


def strip_cmake_comments(text):
    """Blanks # comments and #[[ ]] bracket comments, keeping newlines (and so line numbers)."""
    out, i, quoted = [], 0, False
    while i < len(text):
        c = text[i]
        if c == "\\" and quoted:
            out.append(text[i:i + 2])
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c == "#" and not quoted:
            bracket = re.match(r"#\[(=*)\[", text[i:])
            closing = "]" + bracket.group(1) + "]" if bracket else "\n"
            end = text.find(closing, i)
            end = len(text) if end < 0 else end + (len(closing) if bracket else 0)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def cmake_calls(text, command):
    """(line of each argument, argument) lists of every call of command; $<...> skipped."""
    for match in re.finditer(r"\b" + command + r"\s*\(", text, re.IGNORECASE):
        args, i, depth, word, word_line = [], match.end(), 1, "", 0
        while i < len(text) and depth:
            c = text[i]
            if text.startswith("$<", i):  # a generator expression, nested ones included
                nest = 0
                while i < len(text):
                    nest += text.startswith("$<", i) or 0
                    nest -= text[i] == ">"
                    i += 2 if text.startswith("$<", i) else 1
                    if nest == 0:
                        break
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            if c.isspace() or c in "()":
                if word:
                    args.append((word_line, word.strip('"')))
                word = ""
            else:
                word_line = word_line if word else text.count("\n", 0, i) + 1
                word += c
            i += 1
        yield args


def link_graph(root):
    """Library -> {dependency: (file, line)} over every dlbench_* library's links."""
    files = []
    for base, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__"
                         and not os.path.exists(os.path.join(base, d, "CMakeCache.txt")))
        files += [os.path.join(base, n) for n in sorted(names)
                  if n == "CMakeLists.txt" or (n.endswith(".cmake") and
                                               os.path.basename(base) == "cmake")]
    libraries, edges = {}, collections.defaultdict(dict)
    for path in files:
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        text = strip_cmake_comments(read(path))
        for args in cmake_calls(text, "add_library"):
            if args and args[0][1].startswith("dlbench_"):
                libraries.setdefault(args[0][1], (rel, args[0][0]))
        for args in cmake_calls(text, "target_link_libraries"):
            if not args or not args[0][1].startswith("dlbench_"):
                continue
            for line, name in args[1:]:
                if name.startswith("dlbench_"):
                    edges[args[0][1]].setdefault(name, (rel, line))
    return libraries, {name: deps for name, deps in edges.items() if name in libraries}


def check_links(root):
    libraries, edges = link_graph(root)
    findings = []
    for start in RESULT_READERS:
        if start not in libraries:
            findings.append(Finding("link", "CMakeLists.txt", 1, start,
                                    f"no add_library({start}) in any CMakeLists.txt: the link "
                                    f"check has nothing to check (renamed? update RESULT_READERS)"))
            continue
        paths, todo = {start: [start]}, collections.deque([start])
        while todo:  # breadth first: the shortest path to each library reached
            name = todo.popleft()
            for dependency in edges.get(name, {}):
                if dependency not in paths:
                    paths[dependency] = paths[name] + [dependency]
                    todo.append(dependency)
        for engine in ENGINE_LIBRARIES:
            if engine in paths:
                file, line = edges[start][paths[engine][1]]
                findings.append(Finding("link", file, line, f"{start} -> {engine}",
                                        f"{start} links the engine's {engine} "
                                        f"({' -> '.join(paths[engine])}): the store and the "
                                        f"report read results without linking the engine"))
    return findings


def check_sizes(root):
    findings = []
    for rel, path in source_files(root, SIZED_FOLDERS, SIZED_EXTENSIONS):
        lines = len(read(path).splitlines())
        if lines > MAX_LINES:
            findings.append(Finding("size", rel, MAX_LINES + 1, "-",
                                    f"{lines} lines, over {MAX_LINES}: split it along its seams"))
    return findings


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PP_NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[0-9A-Za-z_.])*")
RAW_PREFIXES = {"R", "u8R", "uR", "UR", "LR"}


def string_literals(text):
    """(line, contents) of every string literal in C++ source; comments and chars skipped."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c.isdigit():
            i = PP_NUMBER.match(text, i).end()
        elif IDENTIFIER.match(c):
            word = IDENTIFIER.match(text, i).group(0)
            i += len(word)
            if word in RAW_PREFIXES and text.startswith('"', i):
                delimiter = re.match(r'"([^(\s]*)\(', text[i:i + 20])
                if delimiter:
                    start = i + len(delimiter.group(0))
                    end = text.find(")" + delimiter.group(1) + '"', start)
                    end = n if end < 0 else end
                    yield text.count("\n", 0, i) + 1, text[start:end]
                    i = end + len(delimiter.group(1)) + 2
            # Any other prefix (u8, L, a user-defined literal's operator) leaves the quote next.
        elif c in "\"'":
            end = i + 1
            while end < n and text[end] not in (c, "\n"):
                end += 2 if text[end] == "\\" else 1
            if c == '"':
                yield text.count("\n", 0, i) + 1, text[i + 1:end]
            i = end + 1
        else:
            i += 1


FLAG = re.compile(r"(?<![A-Za-z0-9_-])--[a-z][a-z0-9-]*")


def check_hints(root):
    findings = []
    for rel, path in source_files(root, ["engine"], CXX_EXTENSIONS):
        for line, literal in string_literals(read(path)):
            flags = FLAG.findall(literal)
            if flags:
                findings.append(Finding("hint", rel, line, literal.strip(),
                                        f"the engine names the CLI flag {', '.join(flags)} in "
                                        f'"{literal}": say what to change in words and let '
                                        f"the CLI add the flag"))
    return findings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="the tree to check (default: this checkout)")
    parser.add_argument("--allow-list", help="a file that replaces the built-in allow-list")
    args = parser.parse_args()
    root = os.path.realpath(args.root or os.path.join(os.path.dirname(__file__), ".."))
    try:
        if not all(os.path.isdir(os.path.join(root, f)) for f in INCLUDE_FOLDERS):
            raise UsageError(f"{root} is not a dlbench source tree (no engine/, bench/, cli/)")
        if args.allow_list:
            if not os.path.isfile(args.allow_list):
                raise UsageError(f"no allow-list at {args.allow_list}")
            entries = parse_allow_list(read(args.allow_list), args.allow_list, 1)
        else:
            first_line = next(number for number, line in enumerate(read(__file__).splitlines(), 1)
                              if line.startswith('ALLOW_LIST = """'))
            entries = parse_allow_list(ALLOW_LIST, "scripts/check-layout.py", first_line)
    except UsageError as error:
        print(f"check-layout: {error}", file=sys.stderr)
        sys.exit(2)

    findings = check_includes(root) + check_links(root) + check_sizes(root) + check_hints(root)
    used, problems, allowed = set(), [], 0
    for finding in findings:
        entry = next((e for e in entries if (e.check, e.file, e.subject) ==
                      (finding.check, finding.file, finding.subject)), None)
        if entry:
            used.add(entry)
            allowed += 1
        else:
            problems.append(f"{finding.file}:{finding.line}: {finding.problem}")
    for entry in entries:
        if entry not in used:
            problems.append(f"{entry.where}: stale allow-list entry ({entry.check} | {entry.file} "
                            f"| {entry.subject}) matches nothing: remove it")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-layout: {len(problems)} problems", file=sys.stderr)
        sys.exit(1)
    print(f"check-layout: includes, links, sizes and engine hints keep to the floors "
          f"({allowed} known violations allow-listed, each with the step that removes it)")


if __name__ == "__main__":
    main()
