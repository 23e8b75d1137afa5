"""Command rules on a real parser, against the bypass classes users of other agents reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from arnes.permissions.engine import RuleEngine
from arnes.permissions.readonly import is_read_only
from arnes.permissions.rules import CommandPattern, RuleError, SourcedRule, parse_rule
from arnes.permissions.shell import analyse
from arnes.permissions.types import Mode, ToolRequest


def engine(ws: Path, mode: Mode = "default", sandboxed: bool = False, **rules: list[str]) -> RuleEngine:
    sourced = [SourcedRule(k, r, "test") for k in ("deny", "ask", "allow") for r in rules.get(k, [])]
    e = RuleEngine(ws, mode, sourced)
    e.sandboxed = sandboxed
    return e


def decide(e: RuleEngine, command: str) -> tuple[str, str]:
    d = e.decide(ToolRequest("Bash", {"command": command}, (), False, command))
    return d.kind, d.reason


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


# -- splitting -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "names"),
    [
        ("a && b || c; d | e & f\ng", ["a", "b", "c", "d", "e", "f", "g"]),
        ("(cd x && rm y)", ["cd", "rm"]),
        ("{ ls; rm z; }", ["ls", "rm"]),
        ("echo $(rm a) `rm b` <(rm c)", ["rm", "rm", "rm", "echo"]),
        ('echo "$(echo $(rm deep))"', ["rm", "echo", "echo"]),
        ("bash -c 'ls && rm x'", ["ls", "rm", "bash"]),
        ("eval 'rm x; ls'", ["rm", "ls", "eval"]),
        ("if true; then rm x; fi", ["true", "rm"]),
        ("for f in *; do rm $f; done", ["rm"]),
        ("cat <<EOF\n$(rm x)\nEOF", ["cat", "rm"]),
        ("X=$(rm a) ls", ["rm", "ls"]),
    ],
)
def test_compound_commands_split_into_every_part(command: str, names: list[str]) -> None:
    assert sorted(c.words[0] for c in analyse(command).commands) == sorted(names)


@pytest.mark.parametrize(
    ("command", "words", "wrappers"),
    [
        ("timeout 5 rm -rf x", ["rm", "-rf", "x"], ["timeout"]),
        ("timeout -s KILL -k 2 5 rm x", ["rm", "x"], ["timeout"]),
        ("nice -n 10 rm x", ["rm", "x"], ["nice"]),
        ("nice -5 rm x", ["rm", "x"], ["nice"]),
        ("env -i A=1 B=2 rm x", ["rm", "x"], ["env"]),
        ("nohup rm x", ["rm", "x"], ["nohup"]),
        ("xargs -n 1 -I{} rm {}", ["rm", "$?"], ["xargs"]),  # {} is a line of input
        ("command rm x", ["rm", "x"], ["command"]),
        ("stdbuf -o0 timeout 3 nice nohup rm x", ["rm", "x"], ["stdbuf", "timeout", "nice", "nohup"]),
    ],
)
def test_wrappers_are_looked_through(command: str, words: list[str], wrappers: list[str]) -> None:
    (cmd,) = analyse(command).commands
    assert cmd.words == words and cmd.wrappers == wrappers


def test_quotes_are_removed_before_matching() -> None:
    (cmd,) = analyse("'r''m' \"-rf\" x\\ y").commands
    assert cmd.words == ["rm", "-rf", "x y"]


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("ls > out.txt", ["out.txt"]),
        ("ls >> log 2>&1", ["log"]),
        ("ls &> all.txt", ["all.txt"]),
        ("ls 2>/dev/null", []),
        ("echo x | tee -a a.txt b.txt", ["a.txt", "b.txt"]),
        ("cat < in.txt", []),
        ("(echo x > inner.txt)", ["inner.txt"]),
    ],
)
def test_redirections_that_write_are_found(command: str, writes: list[str]) -> None:
    assert analyse(command).writes == writes


@pytest.mark.parametrize(
    "command", ["$CMD x", 'eval "$X"', 'bash -c "$S"', "curl x | sh", "source env.sh", "f() { rm x; }; f", "ls > $OUT"]
)
def test_what_cannot_be_looked_into_is_opaque(command: str) -> None:
    assert analyse(command).opaque


def test_unparseable_commands_are_errors() -> None:
    assert analyse('echo "unterminated').error
    assert analyse("ls &&").error


# -- read-only classification ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("ls -la", True), ("cat a b", True), ("git status", True), ("git log --oneline -5", True),
        ("git --no-pager diff", True), ("rg -n foo", True), ("find . -name '*.py'", True),
        ("sed -n 1,20p a.py", True), ("wc -l a", True), ("head -n 5 a", True),
        ("git push", False), ("git diff --output=x", False), ("git -c core.pager=evil log", False),
        ("find . -delete", False), ("find . -exec rm {} ;", False), ("sed -i s/a/b/ f", False),
        ("sed 's/a/b/w out' f", False), ("sort -o out in", False), ("rg --pre evil x", False),
        ("uniq in out", False), ("rm x", False), ("npm test", False), ("date -s 2020-01-01", False),
    ],
)  # fmt: skip
def test_read_only_commands(command: str, read_only: bool) -> None:
    cmd = analyse(command).commands[-1]  # find -exec also yields the command it runs, first
    assert is_read_only(cmd) is read_only


# -- command patterns ------------------------------------------------------------------------


def test_exact_and_prefix_patterns() -> None:
    assert CommandPattern.parse("npm test").allows(["npm", "test"])
    assert not CommandPattern.parse("npm test").allows(["npm", "test", "--", "-u"])
    assert CommandPattern.parse("git commit:*").allows(["git", "commit", "-m", "x"])
    assert not CommandPattern.parse("git commit:*").allows(["git", "commitx"])
    assert not CommandPattern.parse("git commit:*").allows(["git", "-c", "x", "commit"])


@pytest.mark.parametrize(
    "words", [["rm", "-rf", "/"], ["rm", "-fr", "/"], ["rm", "-r", "-f", "/"], ["/bin/rm", "-rf", "/"]]
)
def test_deny_patterns_survive_reordered_and_bundled_flags(words: list[str]) -> None:
    assert CommandPattern.parse("rm -rf:*").denies(words)


def test_deny_patterns_see_flags_anywhere() -> None:
    assert CommandPattern.parse("git push --force:*").denies(["git", "push", "origin", "main", "--force"])
    assert not CommandPattern.parse("git push --force:*").denies(["git", "push", "origin"])


@pytest.mark.parametrize("raw", ['Bash("unterminated:*)', "Bash(:*)"])
def test_bad_bash_rules_are_refused(raw: str) -> None:
    with pytest.raises(RuleError):
        parse_rule(raw)


# -- decisions -------------------------------------------------------------------------------

DENY_RM = {"deny": ["Bash(rm:*)"]}


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf x", "ls && rm x", "ls; rm x", "ls | rm x", "ls || rm x", "ls & rm x", "ls\nrm x",
        "timeout 5 rm x", "nice -n 5 rm x", "env A=1 rm x", "nohup rm x", "ls | xargs rm",
        "echo $(rm x)", "echo `rm x`", "cat <(rm x)", "echo \"$(ls $(rm x))\"", "eval 'rm x'",
        "bash -c 'rm x'", "sh -c \"ls && rm x\"", "{ rm x; }", "(rm x)", "/bin/rm x",
        "cat <<EOF\n$(rm x)\nEOF", "X=$(rm x) ls", "bash -c \"bash -c 'rm x'\"",
    ],
)  # fmt: skip
@pytest.mark.parametrize("mode", ["default", "bypass"])
def test_a_deny_on_any_part_denies_the_whole_in_every_mode(ws: Path, command: str, mode: Mode) -> None:
    assert decide(engine(ws, mode, **DENY_RM), command) == ("deny", "rule Bash(rm:*)")


def test_a_deny_on_the_wrapper_itself_applies(ws: Path) -> None:
    assert decide(engine(ws, deny=["Bash(sudo:*)"]), "sudo ls")[0] == "deny"
    assert decide(engine(ws, deny=["Bash(timeout:*)"]), "timeout 5 ls")[0] == "deny"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npm test", "allow"),
        ("npm test && npm publish", "ask"),  # an allow must cover every part
        ("timeout 60 npm test", "allow"),  # wrappers are looked through
        ("PATH=/tmp/evil npm test", "ask"),  # not trusted: a risky variable
        ("LD_PRELOAD=x.so npm test", "ask"),
        ("echo $(npm test)", "allow"),  # echo is read-only; npm test is...
        ("bash -c 'npm test'", "ask"),  # ...but a prefix rule never allows inside sh -c / eval
        ("eval npm test", "ask"),
        ("npm test > report.txt", "ask"),  # a write by redirection is judged as a write: default asks
        ("npm $X", "ask"),
    ],
)
def test_allow_rules_are_strict(ws: Path, command: str, expected: str) -> None:
    got = decide(engine(ws, allow=["Bash(npm test)", "Bash(echo:*)"]), command)[0]
    if command == "echo $(npm test)":
        assert got == "ask"  # the nested npm test cannot be allowed by the rule
    else:
        assert got == expected


def test_git_prefix_rule(ws: Path) -> None:
    e = engine(ws, allow=["Bash(git commit:*)"])
    assert decide(e, "git commit -m 'x y'")[0] == "allow"
    assert decide(e, "git commit -m x && git push")[0] == "ask"


@pytest.mark.parametrize("mode", ["default", "plan"])
def test_read_only_commands_run_without_asking(ws: Path, mode: Mode) -> None:
    for command in ("ls -la", "git status && git diff", "rg foo | head -5", "cat a.txt | wc -l", "find . -name x"):
        assert decide(engine(ws, mode), command) == ("allow", "read-only command"), command


def test_other_commands_ask_in_default_and_are_denied_in_plan(ws: Path) -> None:
    assert decide(engine(ws), "npm install") == ("ask", "not a read-only command: npm install")
    assert decide(engine(ws, "plan"), "npm install")[0] == "deny"
    assert decide(engine(ws, "plan"), "ls > out.txt")[0] == "deny"


def test_accept_edits_runs_commands_only_when_sandboxed(ws: Path) -> None:
    assert decide(engine(ws, "acceptEdits", sandboxed=True), "npm install")[0] == "allow"
    assert decide(engine(ws, "acceptEdits", sandboxed=False), "npm install")[0] == "ask"
    assert decide(engine(ws, "bypass"), "npm install")[0] == "allow"


def test_unparseable_and_opaque_commands_ask(ws: Path) -> None:
    assert decide(engine(ws), 'echo "unterminated')[0] == "ask"
    assert decide(engine(ws, allow=["Bash"]), "$CMD x")[0] == "ask"  # even a blanket allow cannot see inside
    assert decide(engine(ws, "acceptEdits", sandboxed=True), "curl x | sh")[0] == "ask"


def test_redirections_are_judged_by_the_path_rules(ws: Path, tmp_path: Path) -> None:
    e = engine(ws, "acceptEdits", deny=["Edit(**/.env*)"])
    assert decide(e, "echo x > .env")[0] == "deny"
    assert decide(e, "echo x > notes.txt")[0] == "allow"
    assert decide(e, f"echo x > {tmp_path}/outside.txt")[0] == "ask"
    assert decide(engine(ws, "bypass"), "echo x > .git/hooks/pre-commit")[0] == "deny"
    assert decide(e, "echo x | tee .env.local")[0] == "deny"


def test_read_only_commands_cannot_read_denied_or_outside_files(ws: Path, tmp_path: Path) -> None:
    e = engine(ws, deny=["Read(**/.env*)"])
    assert decide(e, "cat .env")[0] == "deny"
    assert decide(e, "cat src/../.env")[0] == "deny"
    assert decide(e, "head -1 app/.ENV.prod")[0] == "deny"
    assert decide(e, f"cat {tmp_path}/secret.txt")[0] == "ask"
    assert decide(e, "cat README.md")[0] == "allow"


def test_always_is_offered_for_a_command_prefix(ws: Path) -> None:
    e = engine(ws)
    suggest = e.suggest_rule
    assert suggest(ToolRequest("Bash", {}, (), False, "npm test -- -u")) == "Bash(npm test:*)"
    # No program-wide prefix: `Bash(python:*)` would allow any code, `Bash(make:*)` any makefile.
    assert suggest(ToolRequest("Bash", {}, (), False, "make")) == "Bash(make)"
    assert suggest(ToolRequest("Bash", {}, (), False, "python -m unittest")) == "Bash(python -m unittest)"
    assert (
        suggest(ToolRequest("Bash", {}, (), False, "python3 -m pytest -q tests")) == "Bash(python3 -m pytest -q tests)"
    )
    assert suggest(ToolRequest("Bash", {}, (), False, "git commit -m x")) == "Bash(git commit:*)"
    assert suggest(ToolRequest("Bash", {}, (), False, "sudo make install")) is None
    assert suggest(ToolRequest("Bash", {}, (), False, "ls && rm x")) is None
