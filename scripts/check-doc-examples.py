#!/usr/bin/env python3
"""Checks that every `dlbench ...` command shown in the README and docs/ still runs as shown.

Reads the command lines in fenced code blocks of README.md and docs/**/*.md (not
docs/plan-step-contract.md, an internal plan): a line that starts with `$ ` in a block that has
prompts, else a line that starts with `dlbench` (after environment assignments or an
`mpirun`/`srun` launcher). Each command is parsed against the real binary's own `--help` (the
subcommands, their flags, which flags take a value, the choices a value may take and the
positionals), so an example naming a subcommand or flag that no longer exists fails with its
FILE:LINE. A synopsis (`dlbench report [--last [N] | --last-suite]`) has only its flags checked.
Examples that need nothing but a CPU and can run without side effects are also run for real,
dry: `suite X` as `suite X --check` (checks the suite, opens no database) and `info`.

Usage: check-doc-examples.py --dlbench BUILD/dlbench [--root REPO] [FILE.md ...]
Exit 0 when every example checks, 1 when one does not (each printed as FILE:LINE: why), 2 on
bad usage.
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

SKIPPED_DOCS = {"docs/plan-step-contract.md"}
LAUNCHERS = {"mpirun", "mpiexec", "srun"}
TYPE_TOKEN = re.compile(r"^\[?[A-Z][A-Z0-9_]*(:\{[^}]*\})?\]?$")
FLAG_IN_SYNOPSIS = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


class Command:
    """One node of dlbench's command tree, as its --help describes it."""

    def __init__(self, path):
        self.path = path  # ["runs", "list"]
        self.flags = {}  # "--batch" -> (takes_value, value_optional, choices or None)
        self.subcommands = []
        self.positionals = []  # (name, required, variadic)
        self.needs_subcommand = False
        self.parent = None
        self.children = {}

    def name(self):
        return " ".join(["dlbench"] + self.path)

    def flag(self, word):
        at = self
        while at is not None:
            if word in at.flags:
                return at.flags[word]
            at = at.parent
        return None


def help_text(binary, path, env):
    done = subprocess.run([binary] + path + ["--help"], capture_output=True, text=True, env=env,
                          timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"'{' '.join([binary] + path)} --help' exited {done.returncode}")
    return done.stdout


def parse_help(command, text):
    section = None
    usage_seen = False
    for line in text.splitlines():
        if line.startswith("Usage:") and not usage_seen:
            usage_seen = True
            words = line.split()[2 + len(command.path):]
            for w in words:
                if w == "[OPTIONS]":
                    continue
                if w == "SUBCOMMAND":
                    command.needs_subcommand = True
                elif w != "[SUBCOMMAND]":
                    command.positionals.append(
                        (w.strip("[]").rstrip("."), not w.startswith("["), w.endswith("...")
                         or w.endswith("...]")))
            continue
        if line.endswith(":") and not line.startswith(" "):
            section = line[:-1]
            continue
        if not line.startswith("  ") or line.startswith("   "):
            continue
        spec = re.split(r"\s{2,}", line.strip())[0]
        if section == "Subcommands":
            command.subcommands.append(spec.split()[0])
        elif section == "Options" and spec.startswith("-"):
            names, kind = [], None
            for token in spec.split():
                if token.startswith("-") and kind is None:
                    names.append(token.rstrip(","))
                else:
                    kind = token if TYPE_TOKEN.match(token) else ""
                    break
            choices = None
            if kind and ":{" in kind:
                choices = kind[kind.index(":{") + 2:kind.index("}")].split(",")
            for n in names:
                command.flags[n] = (bool(kind), bool(kind) and kind.startswith("["), choices)


def command_tree(binary):
    env = dict(os.environ)
    root = Command([])
    todo = [root]
    while todo:
        node = todo.pop()
        parse_help(node, help_text(binary, node.path, env))
        for sub in node.subcommands:
            child = Command(node.path + [sub])
            child.parent = node
            node.children[sub] = child
            todo.append(child)
    return root


def examples(path, rel):
    """(line number, text) of each dlbench command line in the fenced blocks of one file."""
    blocks, block, start, fence = [], None, 0, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if fence is None and stripped.startswith("```"):
            fence, block, start = stripped[:3], [], n
        elif fence is not None and stripped.startswith(fence):
            blocks.append((start, block))
            fence = None
        elif fence is not None:
            block.append((n, line))
    found = []
    for _, block in blocks:
        prompted = any(l.startswith("$ ") for _, l in block)
        i = 0
        while i < len(block):
            n, line = block[i]
            i += 1
            if prompted:
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            # A synopsis goes on in lines indented under it; a command in lines ending in '\'.
            while i < len(block) and (line.endswith("\\") or
                                      re.match(r"^\s+\[", block[i][1])):
                line = line.rstrip("\\") + " " + block[i][1].strip()
                i += 1
            if re.match(r"^(\w+=\S*\s+)*((mpirun|mpiexec|srun)\s.*)?(\S*/)?dlbench(\s|$)", line):
                found.append((rel, n, line))
    return found


def is_synopsis(line):
    return "[" in line or "..." in line or re.search(r"\S\|\S", line) is not None


def words_of(line):
    """The arguments after `dlbench`, up to a pipe, redirection or comment."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;<>")
    lexer.whitespace_split = True
    tokens = list(lexer)
    at = next(i for i, t in enumerate(tokens) if t == "dlbench" or t.endswith("/dlbench"))
    prefix, args = tokens[:at], []
    for t in tokens[at + 1:]:
        if t and set(t) <= set("|&;<>"):
            break
        args.append(t)
    return prefix, args


def check_synopsis(root, line):
    node, problems = root, []
    for w in line.split()[line.split().index("dlbench") + 1 if "dlbench" in line.split() else 1:]:
        if w in node.children:
            node = node.children[w]
        else:
            break
    for flag in FLAG_IN_SYNOPSIS.findall(line.split("#")[0].split(" dlbench", 1)[-1]):
        if flag != "--" and node.flag(flag) is None:
            problems.append(f"'{node.name()}' has no flag {flag}")
    return node, problems


def check_command(root, args):
    """Walks args as dlbench's parser would; returns (the subcommand reached, problems)."""
    node, problems, positionals = root, [], []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":  # what follows belongs to the command that `monitor` runs
            positionals.append(word)
            break
        if word.startswith("-") and not re.match(r"^-\d", word):
            name = word.split("=", 1)[0]
            spec = node.flag(name)
            if spec is None:
                problems.append(f"'{node.name()}' has no flag {name}")
                continue
            takes_value, optional, choices = spec
            if takes_value and "=" not in word:
                if i < len(args) and not (optional and args[i].startswith("-")):
                    value = args[i]
                    i += 1
                    if choices and value not in choices:
                        problems.append(f"{name} takes {', '.join(choices)}, not '{value}'")
                elif not optional:
                    problems.append(f"{name} needs a value")
            elif not takes_value and "=" in word:
                problems.append(f"{name} takes no value")
            continue
        if not positionals and word in node.children:
            node = node.children[word]
            continue
        positionals.append(word)
    if any("has no flag" in p for p in problems):
        return node, problems  # its value would read as a positional: say no more
    if node.needs_subcommand:
        problems.append(f"'{node.name()}' needs a subcommand: {', '.join(node.subcommands)}")
    variadic = any(v for _, _, v in node.positionals)
    if len(positionals) > len(node.positionals) and not variadic:
        extra = positionals[len(node.positionals)]
        what = "subcommand or argument" if node.subcommands or not node.path else "argument"
        problems.append(f"'{node.name()}' takes no {what} '{extra}'")
    missing = [n for k, (n, required, _) in enumerate(node.positionals)
               if required and k >= len(positionals)]
    if missing:
        problems.append(f"'{node.name()}' needs {', '.join(missing)}")
    return node, problems


def needs_more_than_a_cpu(prefix, args):
    text = " ".join(args)
    return (bool(set(prefix) & LAUNCHERS) or "cuda" in text or "--gpus" in text
            or "--dist" in text or "postgres" in text or "--framework" in text)


def dry_run(binary, node, args, cwd):
    """Runs the example for real where that has no side effect; returns a problem or None."""
    if node.path == ["suite"]:
        argv = args + ([] if "--check" in args else ["--check"])
    elif node.path == ["info"]:
        argv = args
    else:
        return None
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "share"))
        done = subprocess.run([binary] + argv, capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=120)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[0]
        return f"'dlbench {' '.join(argv)}' exited {done.returncode}: {last}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dlbench", required=True, help="the dlbench binary to check against")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="the repository (default: this script's)")
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md, docs/**/*.md)")
    a = parser.parse_args()
    if not os.access(a.dlbench, os.X_OK):
        print(f"check-doc-examples: {a.dlbench} is not an executable; build dlbench first",
              file=sys.stderr)
        return 2
    a.dlbench = os.path.abspath(a.dlbench)
    files = a.files or [os.path.join(a.root, "README.md")] + sorted(
        glob.glob(os.path.join(a.root, "docs", "**", "*.md"), recursive=True))
    root = command_tree(a.dlbench)
    checked, ran, failures = 0, 0, []
    for path in files:
        rel = os.path.relpath(path, a.root)
        if rel in SKIPPED_DOCS:
            continue
        if not os.path.isfile(path):
            print(f"check-doc-examples: no such file {path}", file=sys.stderr)
            return 2
        for rel, n, line in examples(path, rel):
            checked += 1
            if is_synopsis(line):
                node, problems = check_synopsis(root, line)
            else:
                prefix, args = words_of(line)
                node, problems = check_command(root, args)
                if not problems and not needs_more_than_a_cpu(prefix, args):
                    problem = dry_run(a.dlbench, node, args, a.root)
                    ran += problem is None and node.path in (["suite"], ["info"])
                    if problem:
                        problems.append(problem)
            failures += [f"{rel}:{n}: {p}  (in: {line.strip()})" for p in problems]
    for f in failures:
        print(f)
    print(f"{checked} dlbench examples checked against {a.dlbench} --help, {ran} run dry; "
          f"{len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
