"""README.md and docs/ kept true to the code: every `sinkcheck` and `./dev` command they show
parses with the command line's own parser (every flag exists, every choice is one), every page is
linked from a README short enough to read in five minutes, every link between pages lands on a
heading, every path of this repository they name exists, and the known-bug page names every entry.

Conventions for a command in a fenced block (a block marked `text` holds what a command prints,
and is not read): a line that ends in `\\`, or an indented line that opens with `[` or `-` under
a command, continues it; `# …` is a comment; `VAR=value` before the command is the environment.
A line holding `[…]` options, `a|b` alternatives or `…` for arguments left out is a synopsis: its
flags (and the values of flags with choices) are checked, not the whole line. A command in
running text (a code span) is read the same way. Anything else is parsed whole, as the shell
would hand it to `sinkcheck`, so placeholders such as `DIR` or `<scenario>.json` stand where values go."""
from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from sinkcheck.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 250
PROGRAMS = ("sinkcheck", ".venv/bin/sinkcheck", "./dev")
ELLIPSES = ("…", "...")
# fenced blocks in these languages hold no shell commands (`text`: what a command prints)
NOT_SHELL = ("text", "toml", "json", "python", "xml", "yaml")


@dataclass(frozen=True)
class Command:
    page: str
    line: int
    text: str
    synopsis: bool  # check its flags only

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text}"


def _fenced(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line inside a fenced block of shell."""
    out, fence, shell = [], None, False
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*(```+|~~~+)\s*(\S*)", line)
        if m and fence is None:
            fence, shell = m[1], m[2].lower() not in NOT_SHELL
        elif m and line.strip() == fence:
            fence = None
        elif fence is not None and shell:
            out.append((n, line))
    return out


def _program_at(words: list[str]) -> int | None:
    """Where the program starts after `VAR=value` assignments, or None: not a command of ours."""
    i = 0
    while i < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[i]):
        i += 1
    return i if i < len(words) and words[i] in PROGRAMS else None


def _is_synopsis(text: str) -> bool:
    return bool(re.search(r"\[|\w\|\w", text)) or any(e in text.split() for e in ELLIPSES)


def fenced_commands(page: Path) -> list[Command]:
    lines = _fenced(page.read_text(encoding="utf-8"))
    out: list[Command] = []
    i = 0
    while i < len(lines):
        n, line = lines[i]
        i += 1
        words = line.split()
        if not words or _program_at(words) is None:
            continue
        text, indent = line.strip(), len(line) - len(line.lstrip())
        while i < len(lines):
            nxt = lines[i][1]
            if text.endswith("\\"):
                text = text[:-1].rstrip() + " " + nxt.strip()
            elif len(nxt) - len(nxt.lstrip()) > indent and nxt.lstrip()[:1] in ("[", "-"):
                text += " " + nxt.strip()
            else:
                break
            i += 1
        out.append(Command(page.name, n, text, _is_synopsis(text.split("#")[0])))
    return out


def _prose(text: str) -> str:
    """The page with its fenced blocks blanked, line numbers kept."""
    lines = text.splitlines()
    fenced = {n for n, _ in _fenced(text)} | {n for n, line in enumerate(lines, 1)
                                             if line.lstrip().startswith(("```", "~~~"))}
    return "\n".join("" if n in fenced else line for n, line in enumerate(lines, 1))


def inline_commands(page: Path) -> list[Command]:
    """Commands in code spans of running text: a span may wrap onto the next line."""
    prose = _prose(page.read_text(encoding="utf-8"))
    out = []
    for m in re.finditer(r"(?<!`)`((?:\.venv/bin/)?sinkcheck [^`]+|\./dev [^`]+)`(?!`)", prose):
        span = " ".join(m[1].split())
        out.append(Command(page.name, prose.count("\n", 0, m.start()) + 1, span, True))
    return out


ALL_COMMANDS = [c for page in PAGES for c in fenced_commands(page) + inline_commands(page)]


def _dev_run_prefix() -> list[str]:
    """What `./dev main` hands sinkcheck before the arguments it is given, read from ./dev."""
    script = (ROOT / "dev").read_text(encoding="utf-8")
    m = re.search(r'exec "\$VENV/bin/sinkcheck" (.*?) "\$@"', script)
    assert m, "./dev main no longer runs sinkcheck: update this test"
    return shlex.split(m[1])


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _args(cmd: Command) -> list[str]:
    """The arguments sinkcheck gets from this command line (./dev main's included)."""
    words = shlex.split(cmd.text, comments=True)
    at = _program_at(words)
    assert at is not None, cmd
    program, args = words[at], words[at + 1:]
    if program == "./dev":
        assert args and args[0] in ("main", "test"), f"{cmd}: ./dev takes main or test"
        if args[0] == "test":
            return []  # the rest is pytest's
        return _dev_run_prefix() + args[1:]
    return args


def _check_flags(parser: argparse.ArgumentParser, args: list[str], cmd: Command) -> None:
    """Each flag of a synopsis or a mention is one the (sub)command has; a flag with choices
    takes one of them (alternatives `a|b` each)."""
    options = {s: a for a in parser._actions for s in a.option_strings}
    for i, word in enumerate(args):
        word = word.strip("[]")
        if not word.startswith("-") or word in ELLIPSES or word == "-":
            continue
        flag, eq, value = word.partition("=")
        assert flag in options, f"{cmd}: no option {flag} (has {', '.join(sorted(options))})"
        action = options[flag]
        if action.choices and (eq or i + 1 < len(args)):
            value = value if eq else args[i + 1].strip("[]")
            if value not in ELLIPSES and not value.isupper():
                for alternative in value.split("|"):
                    assert alternative in action.choices, f"{cmd}: {flag} takes {sorted(action.choices)}, not {alternative}"


def _parses(cmd: Command) -> None:
    parser = build_parser()
    args = _args(cmd)
    if not args and cmd.text.split()[0] == "./dev":
        return
    if cmd.synopsis:
        first = next((a for a in args if a not in ELLIPSES), None)
        if first is None or first.startswith("-"):
            _check_flags(parser, args, cmd)
            return
        subs = _subparsers(parser)
        assert first in subs, f"{cmd}: no command {first!r} (sinkcheck has {', '.join(subs)})"
        _check_flags(subs[first], args[args.index(first) + 1:], cmd)
        return
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            parser.parse_args(args)
        except SystemExit as e:
            if e.code not in (0, None):
                pytest.fail(f"{cmd}\n  argparse: {err.getvalue().strip().splitlines()[-1]}")


def test_the_pages_show_commands():
    """The extraction finds what it is meant to (a test over no command proves nothing)."""
    pages = {c.page for c in ALL_COMMANDS}
    assert {"README.md", "cli.md", "model.md", "audit.md", "targets.md"} <= pages, pages
    texts = [c.text for c in ALL_COMMANDS]
    assert any(t.startswith("./dev main") for t in texts) and any(t.startswith("./dev test") for t in texts)
    assert any(not c.synopsis for c in ALL_COMMANDS) and any(c.synopsis for c in ALL_COMMANDS)


@pytest.mark.parametrize("cmd", ALL_COMMANDS, ids=[f"{c.page}:{c.line}" for c in ALL_COMMANDS])
def test_every_command_shown_parses(cmd):
    _parses(cmd)


def test_a_wrong_flag_or_choice_is_caught():
    """The check fails where it should: a flag no command has, a choice not offered, a command
    that does not exist, a required option left out of a whole command."""
    for text, synopsis in [("sinkcheck run --target pysink --no-such-flag --out out", False),
                           ("sinkcheck run --target pysink [--no-such-flag] --out DIR", True),
                           ("sinkcheck model --engine local|flink --out X", True),
                           ("sinkcheck nosuch --out DIR", True),
                           ("sinkcheck run --target pysink", False),
                           ("./dev main --no-such-flag", False)]:
        with pytest.raises((AssertionError, pytest.fail.Exception)):
            _parses(Command("test", 0, text, synopsis))


def test_readme_reads_in_five_minutes_and_links_every_docs_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_README_LINES, f"README.md has {len(text.splitlines())} lines"
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)(?:#[\w-]*)?\)", text))
    pages = {f"docs/{p.name}" for p in PAGES[1:]}
    assert pages, "no docs pages"
    assert pages <= linked, f"not linked from README.md: {sorted(pages - linked)}"
    # the two fresh-machine commands stay exactly as they are
    assert re.search(r"^\./dev main\b", text, re.M) and re.search(r"^\./dev test\b", text, re.M)


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_between_pages_land_on_a_page_and_a_heading():
    anchors = {p.resolve(): {_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", p.read_text(encoding="utf-8"), re.M)}
               for p in PAGES}
    bad = []
    for page in PAGES:
        for target, anchor in re.findall(r"\]\(([^)#:\s]*\.md)?(?:#([\w-]+))?\)", page.read_text(encoding="utf-8")):
            dest = (page.parent / target).resolve() if target else page.resolve()
            if dest not in anchors or (anchor and anchor not in anchors[dest]):
                bad.append(f"{page.name}: ({target}#{anchor})")
    assert not bad, bad


def test_paths_of_this_repository_the_pages_name_exist():
    rooms = "adapters|conformance|reference_impl|reports|sinkcheck|tests|bench|examples|docs|\\.ci"
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        named = re.findall(r"`([^`]+)`", _prose(text)) + [line for _, line in _fenced(text)]
        for where in named:
            for path in re.findall(rf"(?<![\w./~-])((?:{rooms})/[\w./*<>-]*)", where):
                path = path.rstrip(".")
                if "<" in path or "*" in path:  # a pattern: its directory exists
                    path = path.split("<")[0].split("*")[0].rsplit("/", 1)[0]
                if not (ROOT / path).exists():
                    missing.append(f"{page.name}: {path}")
    assert not missing, missing


def test_the_known_bug_page_names_every_entry():
    from conformance.catalog.known_bugs import KNOWN_BUGS

    text = (ROOT / "docs" / "known-bugs.md").read_text(encoding="utf-8")
    assert not [b.id for b in KNOWN_BUGS if f"`{b.id}`" not in text]
