#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a doc names a repository path that does not exist, or when a doc or a code comment
points outside the repository or to a tracker.

Docs are README.md and docs/*.md. They name files in backticks, in links and in prose (code
blocks included); what counts as a path, and must exist:

  1. a token that starts with a top-level folder of the repository (`rtl/board/`,
     host/src/plan/planner.cpp, tests/cli/*_test.sh, sim/src/core_{small,default}.cpp): it must
     match a file or folder, `*` and `{a,b}` read as the shell does. Under build/ (or any build*
     folder) are build outputs: not checked;
  2. the target of a Markdown link ([text](target), not a URL or an #anchor): relative to the doc;
  3. an include path tpuemu/<library>/<file> with a source suffix (SOURCE_SUFFIXES): the tail of a
     file's path in the repository, or a generated file's (below);
  4. a bare file name with a source suffix (hbm_replay.cpp, allocation.md): some file of the
     repository has that name, or a generated file. Exceptions: a name whose stem is in capitals
     is a placeholder (OUT.md, FILE.sv), and EXTERNAL_NAMES are other projects' files the docs
     quote (systemc.h).

A generated file (tpu_pkg.sv, tpuemu/sim/compiled_cores.h) counts as existing when the build
names it: its name (or include path) occurs in the code of a CMake file of the repository (not in
a comment), or, with --build DIR, a file of that build tree has it. The first keeps the check
independent of what was built; the second is for generators CMake does not name.

Code comments name doc pages (docs/hbm.md, "Queues") and headers (tpuemu/plan/planner.h): in the
comments of every source file (see below), a token docs/... must exist and an include path
tpuemu/... must be a file's (rule 3), so that a merged page or a moved header leaves no comment
behind.

Not paths: URLs, absolute paths (but see below), tokens with a placeholder (<layer>, $VAR, ...),
paths into other projects' trees (xla/service/..., src/configuration.cc: no top-level folder of
this repository, not tpuemu/...) and words like GB/s or int8/int32.

The README's layout table (its "## Layout" section) covers every folder a newcomer meets: each
top-level folder (not build*, not hidden), each folder under tests/, and each folder one level
down that builds on its own (a CMakeLists.txt: sim/tlm/, firmware/board/, examples/systemc/). A
folder is covered when the section names it (`sim/tlm/`), or a row that names its parent
(`firmware/`) names it relative to that (`board/`).

Options: every `--option` given to a tpuemu command (`tpuemu run ... --preset`, `./build/tpuemu
plan ...`) in a doc or a source file's comments is one the command's `--help` lists. The command's
arguments run to the end of its backtick span (or of the logical line, in a code block) or to what
ends a command before that (`|`, `&&`, `;`, a shell comment; in prose also `)`, `, ` or the end
of a sentence), so the options of other tools (cmake, ctest, mpirun before `./build/tpuemu`,
pytest, gtest) are never read as tpuemu's. The help comes from --tpuemu BINARY (default: tpuemu of
the --build tree, else ROOT/build/tpuemu; without one the options are not checked, with a note on
stderr, unless --tpuemu names a file that is missing, a finding).

Sections: a reference to a section of a doc - the doc's name (docs/hbm.md, hlo.md, or a link to it)
followed by the section's title in double quotes (`docs/hbm.md, "Queues"`, `[hlo.md](hlo.md),
"Artefacts"`), or a link's #anchor - names a heading of that doc (numbering such as "5." aside) or
the bold lead of one of its paragraphs or list items (`**Dominance**.`); the title may be the
start of the heading up to a word's end ("Queues" for "Queues and write batching"), case and
backticks aside. An anchor is a heading's GitHub anchor. Checked in the docs and in comments,
where a reference may run over two comment lines.

The layer table: a doc's table whose first column is "layer" and which has a "builds on" column
lists the layers of host/layers.txt in its order, and each row's "builds on" names (before a ';',
after which come libraries that are no layers) exactly the layers layers.txt gives it.

References that do not belong in docs or comments, which explain their decisions themselves:

  - a tracker reference: "issue 12", "issues 9 and 11", "#12";
  - a file outside the repository: /work/..., /tmp/..., /home/..., ../shared, a design.md (the
    repository has none).

They are looked for in the docs (the whole text) and in the comments of every source file
(comment lines and trailing comments of C/C++/SystemVerilog/JavaScript/protobuf and of
Python/shell/CMake; test fixtures and example programs are data and are skipped, as for the SPDX
check).

  check-docs.py [ROOT] [--build DIR] [--tpuemu BINARY]   the repository's docs and sources
  check-docs.py --root ROOT [--build DIR] [--tpuemu BINARY] FILE...   only these files (docs by
                                                                      their .md suffix)

Each finding is one line "file:line: ..."; the exit status is 1 when there is any.
"""
import argparse
import fnmatch
import glob
import os
import re
import sys

SKIP_DIRS = {".git", "node_modules", "__pycache__"}
# Data, not prose: fixtures whose text tests pin, fuzz inputs, example programs.
SKIP_PREFIXES = ("build", "tests/data", "tests/fuzz/corpus", "examples/programs")
# File names that make a token a path even without a top-level folder in front of it.
SOURCE_SUFFIXES = {".cpp", ".h", ".hpp", ".c", ".cc", ".inc", ".sv", ".svh", ".v", ".py", ".sh",
                   ".cmake", ".md", ".js", ".proto", ".ld", ".S", ".f", ".vlt"}
SOURCE_NAMES = {"CMakeLists.txt", "CMakePresets.json", "layers.txt"}
# Other projects' files that the docs quote by name (SystemC's header, VTA's hardware spec header,
# the user's JAX script of docs/hlo.md), and a product whose name looks like a file's.
EXTERNAL_NAMES = {"systemc.h", "hw_spec.h", "train.py", "Node.js"}

SLASH_COMMENT = {".cpp", ".h", ".hpp", ".c", ".cc", ".inc", ".sv", ".svh", ".v", ".js", ".proto",
                 ".vlt", ".ld", ".S"}
HASH_COMMENT = {".py", ".sh", ".cmake", ".in"}
HASH_NAMES = {"CMakeLists.txt", "run"}

URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
# A path-like token: word characters, dots, dashes, slashes, globs, and {a,b} alternatives.
TOKEN_RE = re.compile(r"(?:[\w.\-/*+~$]|\{[\w.\-,/*]*\}|<[\w.\- ]*>)+")
LINK_RE = re.compile(r"\]\(([^()\s]+)\)")
ISSUE_RE = re.compile(r"\b[Ii]ssues?\s+#?\d+")
HASH_REF_RE = re.compile(r"(?:^|[\s(\[,;])#\d+\b")
OUTSIDE_RE = re.compile(r"(?:^|[\s`'\"(=:])(/work/|/tmp/|/home/)|\.\./shared\b|\bshared/design\.md|"
                        r"\bdesign\.md\b")


def skipped(rel):
    rel = rel.replace(os.sep, "/")
    return any(rel == p or rel.startswith(p + "/") or (p == "build" and rel.startswith("build"))
               for p in SKIP_PREFIXES)


def walk_files(root, skip_data=True):
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and
                             not (skip_data and skipped(f"{rel_dir}/{d}".lstrip("/"))))
        for name in sorted(filenames):
            yield f"{rel_dir}/{name}".lstrip("/")


class Tree:
    """The repository's files and folders (and the build tree's file names, when given)."""

    def __init__(self, root, build=None):
        self.root = root
        # Everything, fixtures included: a doc may name a fixture.
        self.files = list(walk_files(root, skip_data=False))
        self.top = {e for e in os.listdir(root) if os.path.isdir(os.path.join(root, e))} - {".git"}
        self.names = {f.rsplit("/", 1)[-1] for f in self.files}
        # The code (not the comments) of every CMake file: names the build generates.
        self.cmake_code = "\n".join(
            line.split("#", 1)[0]
            for f in self.files
            if (f.rsplit("/", 1)[-1] == "CMakeLists.txt" or f.endswith(".cmake")) and not skipped(f)
            for line in open(os.path.join(root, f), encoding="utf-8", errors="replace"))
        self.cmake_names = set(re.findall(r"[\w.\-]+", self.cmake_code))
        self.build_names = set()
        self.build_files = []
        if build and os.path.isdir(build):
            for dirpath, _, filenames in os.walk(build):
                self.build_names.update(filenames)
                rel = os.path.relpath(dirpath, build).replace(os.sep, "/")
                self.build_files += [f"{rel}/{n}" for n in filenames]

    def matches(self, pattern):
        """Whether a path relative to the root (with * and {a,b}) names something that exists."""
        return any(glob.glob(os.path.join(self.root, p)) for p in expand_braces(pattern))

    def tail_matches(self, pattern):
        """Whether some file's path ends with /pattern, or the build generates it."""
        alternatives = expand_braces(pattern)
        if any("/" + p in self.cmake_code for p in alternatives):
            return True
        return any(fnmatch.fnmatchcase("/" + f, "*/" + p) for f in self.files + self.build_files
                   for p in alternatives)

    def has_name(self, pattern):
        alternatives = expand_braces(pattern)
        return any(fnmatch.filter(self.names, p) or fnmatch.filter(self.build_names, p) or
                   fnmatch.filter(self.cmake_names, p) for p in alternatives)


def expand_braces(pattern):
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    out = []
    for alternative in match.group(1).split(","):
        out += expand_braces(pattern[:match.start()] + alternative + pattern[match.end():])
    return out


def source_like(name):
    if name in SOURCE_NAMES:
        return True
    base = name
    for alternative in expand_braces(name):
        base = alternative
        break
    return os.path.splitext(base)[1] in SOURCE_SUFFIXES


def check_token(token, tree):
    """None when the token is no path or names something that exists; else why not."""
    token = token.strip(".,:;!?'\"")
    if token.startswith("./"):
        token = token[2:]
    if not token or token.startswith(("/", "~", "-")) or any(c in token for c in "<>$") or \
            "..." in token or "//" in token:
        return None
    parts = token.split("/")
    first = parts[0]
    if first.startswith("build"):
        return None  # a build output
    if first in tree.top and len(parts) > 1:
        return None if tree.matches(token.rstrip("/")) else "no such file or folder"
    if first == "tpuemu" and len(parts) > 2 and source_like(parts[-1]):
        return None if tree.tail_matches(token) else "no file has this include path"
    if len(parts) > 1 or not source_like(token) or token in EXTERNAL_NAMES:
        return None
    stem = os.path.splitext(token)[0]
    if stem.isupper():
        return None  # a placeholder
    return None if tree.has_name(token) else "no file of this name"


def check_link(target, doc_dir, tree):
    """None when a Markdown link's target exists (URLs and anchors are not checked)."""
    target = target.split("#", 1)[0]
    if not target or URL_RE.match(target) or target.startswith("mailto:"):
        return None
    resolved = os.path.normpath(os.path.join(doc_dir, target))
    return None if os.path.exists(resolved) else "link to a file that does not exist"


def path_findings(path, rel, tree):
    doc_dir = os.path.dirname(os.path.abspath(path))
    findings = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, start=1):
        for target in LINK_RE.findall(line):
            why = check_link(target, doc_dir, tree)
            if why:
                findings.append(f"{rel}:{number}: '{target}': {why}")
        text = URL_RE.sub(" ", LINK_RE.sub("] ", line))
        seen = set()
        for match in TOKEN_RE.finditer(text):
            token = match.group(0)
            if token in seen:
                continue
            seen.add(token)
            why = check_token(token, tree)
            if why:
                findings.append(f"{rel}:{number}: '{token.strip('.,:;!?')}': {why}")
    return findings


def comment_text(line, suffix, name):
    """The part of a source line that is a comment (approximately: no string parsing)."""
    stripped = line.strip()
    if suffix in SLASH_COMMENT:
        if stripped.startswith(("/*", "*")):
            return stripped
        at = line.find("//")
        return line[at:] if at >= 0 else ""
    if suffix in HASH_COMMENT or name in HASH_NAMES:
        if stripped.startswith("#"):
            return stripped
        at = line.find(" #")
        return line[at:] if at >= 0 else ""
    return ""


def layout_findings(root, readme="README.md"):
    """Folders the README's "## Layout" section does not name."""
    with open(os.path.join(root, readme), encoding="utf-8") as f:
        lines = f.read().splitlines()
    try:
        start = lines.index("## Layout")
    except ValueError:
        return [f"{readme}:1: no '## Layout' section"]
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    rows = [set(re.findall(r"`([^`]+)`", line)) for line in lines[start:end]]
    def listed(path):
        return sorted(e for e in os.listdir(os.path.join(root, path))
                      if os.path.isdir(os.path.join(root, path, e)) and not e.startswith(".") and
                      not e.startswith("build") and e != "__pycache__")
    required = []
    for top in listed("."):
        required.append(top)
        for sub in listed(top):
            if top == "tests" or os.path.exists(os.path.join(root, top, sub, "CMakeLists.txt")):
                required.append(f"{top}/{sub}")
    findings = []
    for folder in required:
        parent, _, name = folder.rpartition("/")
        covered = any(t.startswith(f"{folder}/") for row in rows for t in row) or \
            (parent and any(f"{parent}/" in row and f"{name}/" in row for row in rows))
        if not covered:
            findings.append(f"{readme}:{start + 1}: the layout table does not name '{folder}/'")
    return findings


def numbered_text(path, is_doc):
    """(line number, text) of a doc's lines or of a source file's comments, URLs blanked out."""
    name = os.path.basename(path)
    suffix = os.path.splitext(name)[1]
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f.read().splitlines(), start=1):
            text = line if is_doc else comment_text(line, suffix, name)
            if text:
                yield number, URL_RE.sub(" ", text)


def doc_page_findings(path, rel, tree):
    """docs/... and tpuemu/... tokens in a source file's comments that name nothing."""
    findings = []
    for number, text in numbered_text(path, is_doc=False):
        for token in dict.fromkeys(m.group(0).strip(".,:;!?'\"") for m in TOKEN_RE.finditer(text)):
            if token.startswith(("docs/", "tpuemu/")):
                why = check_token(token, tree)
                if why:
                    findings.append(f"{rel}:{number}: '{token}': {why}")
    return findings


def reference_findings(path, rel, is_doc):
    findings = []
    for number, text in numbered_text(path, is_doc):
        tracker = ISSUE_RE.search(text) or HASH_REF_RE.search(text)
        if tracker:
            findings.append(f"{rel}:{number}: '{tracker.group(0).strip()}': a tracker reference "
                            f"(say the decision itself)")
        outside = OUTSIDE_RE.search(text)
        if outside:
            findings.append(f"{rel}:{number}: '{outside.group(0).strip()}': a file outside the "
                            f"repository")
    return findings


# ------------------------------------------------------------------------------------------------
# Options of tpuemu commands: every `--option` after `tpuemu <command>` is one of that command's.
# ------------------------------------------------------------------------------------------------
HELP_OPTION_RE = re.compile(r"^\s+((?:-\w,)*--[\w-]+)")
# `tpuemu run`, `./build/tpuemu run`, `build-ci/tpuemu sweep`: the command word after the program.
COMMAND_RE = re.compile(r"(?<![\w.-])(?:[\w.\-]*/)*tpuemu\s+([a-z][\w-]*)")
OPTION_RE = re.compile(r"(?:^|(?<=[\s\[(|=,]))(--[A-Za-z0-9][\w-]*)")
# What ends a command line: another command of a pipeline or list, a shell comment; in prose also
# a closing parenthesis or the end of a sentence.
SHELL_END_RE = re.compile(r"\|\||\||&&|;|\s#")
PROSE_END_RE = re.compile(r"\|\||\||&&|;|\s#|\)|\.(?:\s|$)|,\s")


def tpuemu_options(binary):
    """{command: its options} from `tpuemu --help` and `tpuemu <command> --help`; "" for the
    program's own options."""
    import subprocess

    def help_text(*args):
        run = subprocess.run([binary, *args, "--help"], capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            raise RuntimeError(f"{binary} {' '.join(args)} --help: exit {run.returncode}")
        return run.stdout

    def options(text):
        found = set()
        for line in text.splitlines():
            match = HELP_OPTION_RE.match(line)
            if match:
                found.update(o for o in match.group(1).split(",") if o.startswith("--"))
        return found

    top = help_text()
    commands = {"": options(top)}
    in_commands = False
    for line in top.splitlines():
        if line.startswith("Subcommands:"):
            in_commands = True
        elif in_commands and re.match(r"^  [a-z][\w-]*\s", line):
            name = line.split()[0]
            commands[name] = options(help_text(name)) | {"--help"}
        elif in_commands and line and not line.startswith(" "):
            in_commands = False
    return commands


def command_spans(text, in_code):
    """(command, the text of its arguments) of each `tpuemu <command> ...` in a line: up to the end
    of its backtick span (or of the line in a code block), or what ends a command before that."""
    spans = []
    for match in COMMAND_RE.finditer(text):
        rest = text[match.end():]
        in_backticks = text[:match.start()].count("`") % 2 == 1
        if in_backticks:
            rest = rest.split("`", 1)[0]
        end = (SHELL_END_RE if in_code or in_backticks else PROSE_END_RE).search(rest)
        if not (in_code or in_backticks):
            rest = rest.split("`", 1)[0]
        spans.append((match.group(1), rest[:end.start()] if end and end.start() < len(rest)
                      else rest))
    return spans


def option_findings(rel, numbered_lines, commands):
    """Options given to a tpuemu command that its --help does not list."""
    findings = []
    for number, text, in_code in numbered_lines:
        for command, arguments in command_spans(text, in_code):
            if command not in commands or not command:
                continue
            for option in dict.fromkeys(OPTION_RE.findall(arguments)):
                if option not in commands[command]:
                    findings.append(f"{rel}:{number}: 'tpuemu {command} {option}': no such option "
                                    f"(tpuemu {command} --help)")
    return findings


def doc_lines(path):
    """(line number, text, in a code block) of a doc; a code block's continued lines (ending in
    a backslash) joined into the first."""
    out, in_code, pending = [], False, None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f.read().splitlines(), start=1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            if in_code and pending:
                pending[1] += " " + line.rstrip("\\")
                if not line.endswith("\\"):
                    out.append(tuple(pending))
                    pending = None
                continue
            if in_code and line.endswith("\\"):
                pending = [number, line.rstrip("\\"), True]
                continue
            out.append((number, URL_RE.sub(" ", line), in_code))
    return out


# ------------------------------------------------------------------------------------------------
# Section references: `docs/hbm.md, "Queues"`, `[hlo.md](hlo.md), "Artefacts"`, `cli.md#outputs`.
# ------------------------------------------------------------------------------------------------
# A doc's name, bare or as a link's target, then the section's title in double quotes.
SECTION_REF_RE = re.compile(r"(?:\[[^\]\n]*\]\(((?:[\w.\-]+/)*[\w.\-]+\.md)(?:#[\w\-]+)?\)|"
                            r"(?<![\w./-])((?:[\w.\-]+/)*[\w.\-]+\.md)(?![\w./#)-]))"
                            r",?[ \t]+(?:section[ \t]+)?\"([^\"\n]+)\"")
ANCHOR_RE = re.compile(r"((?:[\w.\-]+/)*[\w.\-]+\.md)#([\w\-]+)")
HEADING_RE = re.compile(r"^#+\s+(?:\d+(?:\.\d+)*\.?\s+)?(.*?)\s*#*$")
BOLD_LEAD_RE = re.compile(r"^\s*(?:[-*+]\s+|\d+\.\s+)?\*\*([^*]+?)\*\*")


def normalised(title):
    return " ".join(title.replace("`", "").replace("*", "").split()).lower().rstrip(".:")


def slug(heading):
    """GitHub's anchor of a heading."""
    text = heading.replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


class Sections:
    """The sections of each doc: its headings and the bold leads of its paragraphs and items."""

    def __init__(self):
        self.cache = {}

    def of(self, path):
        if path not in self.cache:
            headings, leads, in_code = [], [], False
            with open(path, encoding="utf-8") as f:
                for line in f.read().splitlines():
                    if line.lstrip().startswith("```"):
                        in_code = not in_code
                    elif not in_code and line.startswith("#"):
                        headings.append(HEADING_RE.match(line).group(1))
                    elif not in_code:
                        lead = BOLD_LEAD_RE.match(line)
                        if lead:
                            leads.append(lead.group(1))
            self.cache[path] = (headings, leads)
        return self.cache[path]

    def has_title(self, path, title):
        """A heading or bold lead that is the title, or starts with it and goes on after a word
        ("Queues" for "Queues and write batching", "Accuracy" for "Accuracy (measured)")."""
        want = normalised(title)
        headings, leads = self.of(path)
        for name in map(normalised, headings + leads):
            if name == want or (name.startswith(want) and not name[len(want)].isalnum()):
                return True
        return False

    def has_anchor(self, path, anchor):
        return anchor.lower() in {slug(h) for h in self.of(path)[0]}


def resolve_doc(name, referrer_dir, tree):
    """The doc a reference names: a path from the root or from the referring file's folder, else
    the one doc of that name; None when there is none or more than one."""
    for base in ((tree.root, referrer_dir) if "/" in name else (referrer_dir, tree.root)):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(candidate) and candidate.startswith(tree.root + os.sep):
            return candidate
    matches = [f for f in tree.files if (f == name or f.endswith("/" + name)) and not skipped(f)]
    return os.path.join(tree.root, matches[0]) if len(matches) == 1 else None


def joined_text(numbered):
    """One string of (line number, text) pieces and, per character offset, the line it is on."""
    text, starts = "", []
    for number, piece in numbered:
        starts.append((len(text), number))
        text += piece + " "
    def line_at(offset):
        line = starts[0][1] if starts else 1
        for start, number in starts:
            if start > offset:
                break
            line = number
        return line
    return text, line_at


def comment_body(text):
    """A comment without its markers (//, ///, /*, *, #), so a reference may span lines."""
    return re.sub(r"^\s*(?:/\*+|\*+/?|/{2,}!?|#+)\s?", "", text.strip()).removesuffix("*/")


def section_findings(path, rel, tree, sections, is_doc):
    """References to a section ("Title" after a doc's name, or #anchor) the doc does not have."""
    if is_doc:
        with open(path, encoding="utf-8") as f:
            numbered = list(enumerate(f.read().splitlines(), start=1))
    else:
        numbered = [(n, comment_body(t)) for n, t in numbered_text(path, is_doc=False)]
    text, line_at = joined_text(numbered)
    referrer = os.path.dirname(os.path.abspath(path))
    findings = []
    for match in SECTION_REF_RE.finditer(text):
        name, title = match.group(1) or match.group(2), match.group(3)
        doc = resolve_doc(name, referrer, tree)
        if doc and not sections.has_title(doc, title):
            findings.append(f"{rel}:{line_at(match.start(3))}: '{name}, \"{' '.join(title.split())}"
                            f"\"': no such section (heading or bold lead)")
    for match in ANCHOR_RE.finditer(text):
        name, anchor = match.groups()
        doc = resolve_doc(name, referrer, tree)
        if doc and not sections.has_anchor(doc, anchor):
            findings.append(f"{rel}:{line_at(match.start())}: '{name}#{anchor}': no such heading")
    return findings


# ------------------------------------------------------------------------------------------------
# The host layer table: a doc's table whose columns are "layer" and "builds on ..." is
# host/layers.txt, row for row.
# ------------------------------------------------------------------------------------------------
def read_layers(root):
    """[(layer, [layers it builds on])] of host/layers.txt, in its order."""
    layers = []
    with open(os.path.join(root, "host", "layers.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, _, below = line.partition(":")
                layers.append((name.strip(), below.split()))
    return layers


def layer_table_findings(path, rel, root):
    """Where a doc's layer table differs from host/layers.txt: the layers and their order, and
    each row's layers in "builds on" (before a ';', after which come libraries that are no
    layers)."""
    layers_path = os.path.join(root, "host", "layers.txt")
    if not os.path.exists(layers_path):
        return []
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    expected = read_layers(root)
    names = {name for name, _ in expected}
    findings = []
    for start, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|") or cells[0].lower() != "layer" or \
                not any(c.lower().startswith("builds on") for c in cells):
            continue
        column = next(i for i, c in enumerate(cells) if c.lower().startswith("builds on"))
        rows = []
        for number in range(start + 2, len(lines)):
            if not lines[number].lstrip().startswith("|"):
                break
            row = [c.strip() for c in lines[number].strip().strip("|").split("|")]
            layer = row[0].strip("`")
            below = row[column].split(";", 1)[0] if column < len(row) else ""
            rows.append((number + 1, layer, [w for w in re.findall(r"[\w]+", below) if w in names]))
        listed = [layer for _, layer, _ in rows]
        if listed != [name for name, _ in expected]:
            findings.append(f"{rel}:{start + 1}: the layer table lists {', '.join(listed)}; "
                            f"host/layers.txt has {', '.join(n for n, _ in expected)} (in this "
                            f"order)")
        wanted = dict(expected)
        for number, layer, below in rows:
            if layer in wanted and sorted(below) != sorted(wanted[layer]):
                findings.append(f"{rel}:{number}: layer '{layer}' builds on "
                                f"{', '.join(below) or 'no layer'} in the table, on "
                                f"{', '.join(wanted[layer]) or 'no layer'} in host/layers.txt")
    return findings


def is_source(rel):
    name = rel.rsplit("/", 1)[-1]
    suffix = os.path.splitext(name)[1]
    return suffix in SLASH_COMMENT or suffix in HASH_COMMENT or name in HASH_NAMES


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", help="the repository (default: the one of this script)")
    parser.add_argument("--root", dest="root_option", help="the repository, with FILE arguments")
    parser.add_argument("--build", help="a build tree whose generated files docs may name")
    parser.add_argument("--tpuemu", help="the tpuemu binary whose --help lists each command's "
                        "options (default: tpuemu of the build tree, else ROOT/build/tpuemu)")
    parser.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    args, extra = parser.parse_known_args(argv)
    root = args.root_option or args.root or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "..")
    root = os.path.abspath(root)
    files = args.files + extra
    if args.root_option and args.root:
        files.insert(0, args.root)
    tree = Tree(root, args.build)

    if files:
        targets = [(os.path.abspath(f), os.path.relpath(os.path.abspath(f), root).replace(os.sep, "/"))
                   for f in files]
        docs = [t for t in targets if t[0].endswith(".md")]
        sources = [t for t in targets if not t[0].endswith(".md")]
    else:
        docs = [(os.path.join(root, "README.md"), "README.md")]
        docs += [(os.path.join(root, "docs", n), f"docs/{n}")
                 for n in sorted(os.listdir(os.path.join(root, "docs"))) if n.endswith(".md")]
        sources = [(os.path.join(root, rel), rel) for rel in walk_files(root) if is_source(rel)]

    findings = [] if files else layout_findings(root)
    binary = args.tpuemu or os.path.join(args.build or os.path.join(root, "build"), "tpuemu")
    commands = None
    if os.path.isfile(binary) and os.access(binary, os.X_OK):
        commands = tpuemu_options(os.path.abspath(binary))
    elif args.tpuemu:
        findings.append(f"{os.path.relpath(binary, root)}:0: no tpuemu binary here, so the options "
                        f"of commands cannot be checked (build the target tpuemu)")
    else:
        print(f"check-docs: no {binary}: the options of tpuemu commands are not checked",
              file=sys.stderr)
    sections = Sections()
    for path, rel in docs:
        findings += path_findings(path, rel, tree)
        findings += reference_findings(path, rel, True)
        findings += section_findings(path, rel, tree, sections, True)
        findings += layer_table_findings(path, rel, root)
        if commands:
            findings += option_findings(rel, doc_lines(path), commands)
    for path, rel in sources:
        findings += doc_page_findings(path, rel, tree)
        findings += reference_findings(path, rel, False)
        findings += section_findings(path, rel, tree, sections, False)
        if commands:
            findings += option_findings(
                rel, [(n, t, False) for n, t in numbered_text(path, is_doc=False)], commands)
    def place(finding):
        file, line, _ = finding.split(":", 2)
        return file, int(line)
    findings.sort(key=place)
    for finding in findings:
        print(finding)
    if findings:
        print(f"check-docs: {len(findings)} finding(s) in {len(docs)} docs and {len(sources)} "
              f"sources")
        return 1
    print(f"check-docs: {len(docs)} docs and {len(sources)} sources, no finding")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
