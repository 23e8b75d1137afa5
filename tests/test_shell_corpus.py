"""The parser's reading held against real bash's, over a corpus of tricky command lines.

Each entry of tests/data/shell_corpus.txt runs in real bash (tests/bash_oracle.py); every command
bash ran and every file it made must be among the parts and writes arnes judged, every folder a
command ran in among the folders arnes judged its paths from, and every file `cat` was given among
the real paths arnes judged, unless arnes gives up on the command (then it asks, and in bypass
with Bash deny rules it denies). A new
disagreement between tree-sitter-bash and bash makes this fail; add the line that showed it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arnes.host.paths import real_path
from arnes.permissions.commands import directories, path_target
from arnes.permissions.engine import RuleEngine
from arnes.permissions.readonly import is_read_only, path_arguments
from arnes.permissions.shell import ShellAnalysis, analyse
from arnes.permissions.simplecommand import SimpleCommand
from tests.bash_oracle import Ran, run_all

CORPUS = Path(__file__).parent / "data" / "shell_corpus.txt"


# Every way of hiding a command in another, times every way of spelling it: the systematic part.
CONTEXTS = [
    "X", "(X)", "{ X; }", "echo $(X)", "echo `X`", 'echo "$(X)"', "if X; then :; fi", "while X; do break; done",
    "case a in a) X;; esac", "X &", "! X", "true && X", "false || X", "true | X", "X | true", "bash -c 'X'",
    "sh -c \"X\"", "eval 'X'", "time X", "exec X", "command X", "env A=1 X", "nice X", "timeout 5 X",
    "cat <<EOF\n$(X)\nEOF", 'cat <<<"$(X)"', ": <(X)", "echo ${v:-$(X)}", "a=$(X)", "f() { X; }; f",
    "for i in 1; do X; done", "{ X; } 2>/dev/null", "X 2>&1 | cat", ">/dev/null X", "X >/dev/null",
    "exec 3>&1; X", "[[ $(X) ]]", "(( $(X) ))", "echo $(( $(X) ))", "xargs X </dev/null", "find . -exec X \\;",
    "git -c alias.a='!X' a", "awk 'BEGIN{system(\"X\")}'", "sed '1e X' victim", "X # comment", "X;",
    "until X; do break; done", "if :; then X; fi", "if false; then :; else X; fi", "case a in b) ;; *) X;; esac",
    "function f { X; }; f", "f() ( X ); f", "{ X; } &", "X <<<x", "exec {fd}>/dev/null X", "echo x > >(X)",
    "cat <<-EOF\n\t$(X)\n\tEOF", "cat <<EOF\n${v:-$(X)}\nEOF", "nohup X", "stdbuf -o0 X", "setsid X", "time -p X",
    "env -i X", "env -- X", "command -- X", "sudo X", "xargs -I{} X {} </dev/null", "echo a\nX", "echo a;X",
    "echo a &&\\\nX", "[ -n x ] && X", "coproc X", "trap 'X' EXIT", "x=1 X", "declare v=$(X)",
]  # fmt: skip
CORES = ["rm victim", "r\\\nm victim", "'r'm victim", "\\rm victim", "$'\\162m' victim", "rm vic\\\ntim",
         '"rm" victim', "r\\m victim", "r''m victim", 'r""m victim', "\\r\\m victim", "r$'m' victim",
         "rm\tvictim", ":\n\\rm victim", ":\n'r'm victim", ": \\\n\\rm victim"]  # fmt: skip


def generated() -> list[tuple[str, str]]:
    quoted = {"'X'", "'!X'", "'BEGIN"}  # contexts whose X sits in single quotes: no ' in the core
    out = []
    for context in CONTEXTS:
        for core in CORES:
            if "'" in core and any(q in context for q in quoted):
                continue
            out.append(("any", context.replace("X", core)))
    return out


def entries() -> list[tuple[str, str]]:
    found: list[tuple[str, list[str]]] = []
    for line in CORPUS.read_text().split("\n"):
        if line.startswith("#% "):
            found.append((line[3:].strip(), []))
        elif found:
            found[-1][1].append(line.replace("⇥", "\t"))
        # lines before the first entry are the file's header
    return [(expect, "\n".join(body).removesuffix("\n")) for expect, body in found]


def _fits(pattern: list[str], words: list[str]) -> bool:
    """arnes's words against bash's: a computed word (`$?`), a glob or a `~` word stands for any
    run of words, since bash splits and expands them; every other word must be equal (braces are
    expanded by arnes as bash does)."""
    if not pattern:
        return not words
    head, rest = pattern[0], pattern[1:]
    if head == "$?" or set(head) & set("*?[~"):
        return any(_fits(rest, words[i:]) for i in range(len(words) + 1))
    return bool(words) and words[0] == head and _fits(rest, words[1:])


def _seen(part: SimpleCommand, words: list[str]) -> bool:
    if _fits(part.words, words):
        return True
    # a wrapper bash ran (`timeout 5 rm x`): its command is the tail arnes judged
    name = words[0].rsplit("/", 1)[-1]
    return name in part.wrappers and any(_fits(part.words, words[i:]) for i in range(1, len(words)))


def _places(analysis: ShellAnalysis, ran: Ran) -> list[str]:
    """Where bash ran each command and which files `cat` was given, against the folders and the
    real paths arnes judged (`..` after a link, `~+`, a bare `cd`, `cd -P`)."""
    engine = RuleEngine(ran.folder, home=ran.folder / "home")
    folders = directories(engine, analysis)
    if folders is None:
        return []  # a cd somewhere unknown: arnes asks about every path
    problems = [f"bash ran {words} in {cwd}, not a folder arnes judged" for cwd, words in ran.commands
                if Path(cwd).resolve() not in folders]  # fmt: skip
    arguments = [a for part in analysis.commands if is_read_only(part) for a in path_arguments(part)]
    if any("$" in a for a in arguments):
        return problems  # a path only known when it runs: arnes asks
    targets = [path_target(engine, f, a, "read") for a in arguments for f in folders]
    if any(t is None for t in targets):
        return problems  # `~-`: arnes asks
    judged = {str(t.real) if t.real else real_path(str(t.path), str(ran.folder)) for t in targets if t}
    for cwd, words in ran.commands:
        if words[0] == "cat":
            problems += [f"cat opened {os.path.realpath(os.path.join(cwd, a))}, arnes judged {sorted(judged)}"
                         for a in words[1:] if os.path.realpath(os.path.join(cwd, a)) not in judged]  # fmt: skip
    return problems


def _problems(analysis: ShellAnalysis, ran: Ran) -> list[str]:
    problems = [f"bash ran {words} (in {cwd}), arnes did not see it" for cwd, words in ran.commands
                if not any(_seen(p, words) for p in analysis.commands)]  # fmt: skip
    problems += _places(analysis, ran)
    if not analysis.changes_directory:  # after a cd, arnes asks about the paths anyway
        written = {os.path.normpath(w.replace("~", "home", 1) if w.startswith("~") else w) for w in analysis.writes}
        problems += [f"bash made {f}, arnes saw no write to it" for f in ran.created
                     if f not in written and not f.startswith("home" + os.sep)]  # fmt: skip
    return problems


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, Ran]]:
    if not shutil.which("bash") or not Path("/bin/bash").exists():
        pytest.skip("needs /bin/bash")
    found = entries() + generated()
    root = tmp_path_factory.mktemp("oracle")
    results = run_all([command for _, command in found], root)
    return [(expect, command, ran) for (expect, command), ran in zip(found, results, strict=True)]


def test_arnes_sees_every_command_bash_runs_or_asks(oracle: list[tuple[str, str, Ran]]) -> None:
    failures = []
    for expect, command, ran in oracle:
        analysis = analyse(command)
        gives_up = bool(analysis.error or analysis.opaque)
        problems = [] if gives_up else _problems(analysis, ran)
        if expect == "judged" and gives_up:
            problems.append(f"arnes gave up ({analysis.error or analysis.opaque[0]}) on a line it should read")
        if expect == "asks" and not gives_up:
            problems.append("arnes should give up on this line and ask")
        failures += [f"{command!r}: {p}" for p in problems]
    assert not failures, "\n".join(failures)


def test_the_oracle_records_what_bash_runs(oracle: list[tuple[str, str, Ran]]) -> None:
    """The harness itself: without this, an oracle that records nothing would pass everything."""
    by_command = {command: ran for _, command, ran in oracle}
    assert [w for _, w in by_command["rm victim"].commands] == [["rm", "victim"]]
    assert [w for _, w in by_command["r\\\nm victim"].commands] == [["rm", "victim"]]
    assert by_command["echo x 1>out"].created == ["out"]
    assert ["rm", "victim"] in [w for _, w in by_command["bash -c 'rm victim'"].commands]
