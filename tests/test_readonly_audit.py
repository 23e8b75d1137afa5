"""The read-only list, audited entry by entry: each entry runs unasked in its plain form, and each
of its options that writes, runs a program or reads a file (outside the workspace here) asks.
A new entry without a row here fails the first test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from arnes.permissions.engine import RuleEngine
from arnes.permissions.readonly import CHECKS, PLAIN
from arnes.permissions.rules import SourcedRule
from arnes.permissions.types import Mode, ToolRequest

OUT = "{out}"  # a file outside the workspace
AUDIT: dict[str, tuple[str, list[str]]] = {
    "cat": ("cat a.txt", [f"cat {OUT}", f"cat ws/../../{OUT}"]),
    "head": ("head -n1 a.txt", [f"head {OUT}"]),
    "tail": ("tail a.txt", [f"tail {OUT}"]),
    "wc": ("wc -l a.txt", [f"wc --files0-from={OUT}", f"wc --files0={OUT}", f"wc {OUT}"]),
    "pwd": ("pwd", []),
    "echo": ("echo hi", []),
    "printf": ("printf '%s' x", ["printf -v 'a[$(touch X)]' x"]),
    "true": ("true", []),
    "false": ("false", []),
    "grep": ("grep a a.txt", [f"grep -f {OUT} a.txt", f"grep --exclude-from={OUT} -r a .", f"grep a {OUT}"]),
    "egrep": ("egrep a a.txt", [f"egrep -f{OUT} a.txt", f"egrep a {OUT}"]),
    "fgrep": ("fgrep a a.txt", [f"fgrep --file={OUT} a.txt", f"fgrep a {OUT}"]),
    "which": ("which ls", []),
    "whoami": ("whoami", []),
    "uname": ("uname -a", []),
    "id": ("id -u", []),
    "stat": ("stat a.txt", [f"stat {OUT}"]),
    "file": ("file a.txt", ["file -C -m magic", "file --compile -m magic", f"file -m {OUT} a.txt", f"file -f {OUT}"]),
    "du": ("du -sh .", [f"du --files0-from={OUT}", f"du -X {OUT} .", f"du --exclude-from={OUT} .", f"du {OUT}"]),
    "df": ("df -h", []),
    "basename": ("basename a/b", []),
    "dirname": ("dirname a/b", []),
    "realpath": ("realpath a.txt", [f"realpath {OUT}"]),
    "readlink": ("readlink -f a.txt", [f"readlink {OUT}"]),
    "diff": ("diff a.txt a.txt", [f"diff {OUT} a.txt", f"diff --from-file={OUT} a.txt", f"diff -X {OUT} -r . ."]),
    "cmp": ("cmp a.txt a.txt", [f"cmp {OUT} a.txt"]),
    "nl": ("nl a.txt", [f"nl {OUT}"]),
    "tr": ("tr a b", []),
    "cut": ("cut -c1 a.txt", [f"cut -c1 {OUT}"]),
    "column": ("column a.txt", [f"column {OUT}"]),
    "seq": ("seq 3", []),
    "test": ("test -e a.txt", ["test -v 'a[$(touch X)]'"]),
    "[": ("[ -e a.txt ]", ["[ -v 'a[$(touch X)]' ]"]),
    "type": ("type ls", []),
    "comm": ("comm a.txt a.txt", [f"comm {OUT} a.txt"]),
    "fold": ("fold a.txt", [f"fold {OUT}"]),
    "paste": ("paste a.txt", [f"paste {OUT}"]),
    "rev": ("rev a.txt", [f"rev {OUT}"]),
    "tac": ("tac a.txt", [f"tac {OUT}"]),
    "od": ("od -c a.txt", [f"od {OUT}"]),
    "hexdump": ("hexdump -C a.txt", [f"hexdump {OUT}", f"hexdump -f {OUT} a.txt"]),
    "strings": ("strings a.txt", [f"strings @{OUT}", f"strings {OUT}"]),
    "sha1sum": ("sha1sum a.txt", [f"sha1sum -c {OUT}", "sha1sum --check sums", f"sha1sum {OUT}"]),
    "sha256sum": ("sha256sum a.txt", [f"sha256sum -c {OUT}", "sha256sum -bc sums", f"sha256sum {OUT}"]),
    "sha512sum": ("sha512sum a.txt", [f"sha512sum --check={OUT}", f"sha512sum {OUT}"]),
    "md5sum": ("md5sum a.txt", [f"md5sum -c {OUT}", f"md5sum {OUT}"]),
    "cksum": ("cksum a.txt", [f"cksum -c {OUT}", f"cksum {OUT}"]),
    "jq": (
        "jq .a a.txt",
        [
            "jq -n env",
            "jq -n '$ENV.HOME'",
            "jq -L /tmp 'import \"m\" as m; .' a.txt",
            f"jq -n --rawfile x {OUT} '$x'",
            f"jq --slurpfile x {OUT} -n '$x'",
            f"jq -f {OUT} a.txt",
            f"jq . {OUT}",
            "jq 'include \"m\"; .' a.txt",
        ],
    ),
    "ls": ("ls -la", [f"ls {OUT}", "ls ~+/.."]),
    "tree": ("tree -L 2", ["tree -o listing.txt", "tree -R -H . -L 1", "tree -Ro x"]),
    "cd": ("cd sub", ["cd .. && ls", "cd && grep -r x", "cd - && cat a.txt", "cd ~- && ls"]),
    "expr": ("expr 1 + 1", []),
    "git": (
        "git status",
        [
            "git log --output=x",
            "git log --outp=x",
            "git diff --ext-diff",
            "git log -p --textconv",
            "git -c core.pager=x log",
            "git grep -Ox y",
            "git grep --open-files-in-pager=x y",
            f"git diff --no-index {OUT} a.txt",
            f"git diff {OUT} a.txt",
            f"git blame --contents {OUT} a.txt",
            f"git blame -S {OUT} a.txt",
            f"git grep -f {OUT}",
            "git reflog expire --all",
            "git reflog delete HEAD@{0}",
            "git -C / status",
            "git branch new",
            "git branch -d main",
            "git branch -D main",
            "git branch -m old new",
            "git branch -f main HEAD",
            "git branch --set-upstream-to=origin/main",
            "git branch -u origin/main",
            "git branch --edit-description",
            "git branch --format=%(raw)",
            "git branch --list -d main",
            "GIT_DIR=/tmp git status",
            "git cat-file --filters HEAD:a.txt",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=x git status",
        ],
    ),
    "sed": (
        "sed -n 1p a.txt",
        ["sed -n 1p -i a.txt", "sed '1e touch X' a.txt", "sed -n '1w out' a.txt", f"sed -n 1p {OUT}"],
    ),
    "find": (
        "find . -name '*.txt'",
        [
            "find . -exec touch X ;",
            "find . -delete",
            "find . -fprint out",
            "find . -fls out",
            "find / -name x",
            f"find -files0-from {OUT}",
        ],
    ),
    "sort": (
        "sort a.txt",
        [
            "sort -o out a.txt",
            "sort -mo out a.txt",
            "sort -T /tmp a.txt",
            "sort --compress-program=sh a.txt",
            f"sort {OUT}",
            f"sort --random-source={OUT} -R a.txt",
        ],
    ),
    "rg": ("rg a", ["rg --pre ./x.sh y", "rg --hostname-bin=./x.sh y", "rg -z y", f"rg y {OUT}", f"rg -f {OUT} ."]),
    "uniq": ("uniq a.txt", ["uniq a.txt out", f"uniq {OUT}"]),
    "xxd": ("xxd a.txt", ["xxd -r a.txt", "xxd a.txt out", f"xxd {OUT}"]),
    "date": ("date +%F", ["date -s 2020-01-01", "date --set=2020-01-01", f"date -f {OUT}", f"date -r {OUT}"]),
}
NOT_READ_ONLY = ["env", "env -0", "printenv", "printenv HOME", "hostname", "hostname evil", "less a.txt", "more a.txt"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "sub").mkdir(parents=True)
    (tmp_path / "ws" / "a.txt").write_text("a\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    return tmp_path / "ws"


def kind(ws: Path, command: str, mode: Mode = "default", **rules: list[str]) -> str:
    sourced = [SourcedRule(k, r, "t") for k in ("deny", "ask", "allow") for r in rules.get(k, [])]
    engine = RuleEngine(ws, mode, sourced)
    command = command.replace(OUT, str(ws.parent / "outside.txt"))
    return engine.decide(ToolRequest("Bash", {}, (), False, command)).kind


def test_every_entry_of_the_list_is_audited() -> None:
    assert set(AUDIT) == set(PLAIN) | set(CHECKS)


@pytest.mark.parametrize("name", sorted(AUDIT))
def test_each_entry_runs_plainly_and_asks_for_its_risky_options(ws: Path, name: str) -> None:
    plain, risky = AUDIT[name]
    assert kind(ws, plain) == "allow", plain
    for command in risky:
        assert kind(ws, command) in ("ask", "deny"), command
        assert kind(ws, command, "plan") in ("ask", "deny"), command


@pytest.mark.parametrize("command", NOT_READ_ONLY)
def test_commands_that_show_secrets_or_change_the_machine_are_not_read_only(ws: Path, command: str) -> None:
    assert kind(ws, command) == "ask"


def _git(ws: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)


def test_git_is_read_only_in_a_repository_with_inert_configuration(ws: Path) -> None:
    _git(ws, "init", "-q")
    _git(ws, "remote", "add", "origin", "https://example.invalid/x.git")
    assert kind(ws, "git status && git log --oneline -3") == "allow"


@pytest.mark.parametrize(
    "config",
    ["[core]\n\tfsmonitor = ./hook.sh\n", '[diff "x"]\n\ttextconv = ./hook.sh\n', "[alias]\n\tst = !./hook.sh\n",
     "[include]\n\tpath = ../elsewhere\n", '[filter "x"]\n\tclean = ./hook.sh\n', "[core]\n\tpager = ./hook.sh\n",
     "[core] fsmonitor = ./hook.sh\n", "[core]\n fsMonitor=./hook.sh\n", "garbage"],
)  # fmt: skip
def test_git_asks_where_the_repository_configuration_names_a_program(ws: Path, config: str) -> None:
    _git(ws, "init", "-q")
    with (ws / ".git" / "config").open("a") as f:
        f.write(config)
    assert kind(ws, "git status") == "ask"
    assert kind(ws, "cd sub && git status") == "ask"  # git finds the repository above


def test_git_asks_in_a_bare_repository_layout_or_behind_a_linked_git(ws: Path, tmp_path: Path) -> None:
    _git(ws, "init", "-q", "--bare")
    assert kind(ws, "git status") == "ask"
    other = tmp_path / "other"
    other.mkdir()
    _git(other, "init", "-q")
    (other / "ws2").mkdir()
    (other / "ws2" / ".git").symlink_to(other / ".git")
    assert kind(other / "ws2", "git log") == "ask"


def test_an_allow_rule_for_git_is_not_widened_by_git_variables(ws: Path) -> None:
    rules = {"allow": ["Bash(git status)", "Bash(git push:*)"]}
    assert kind(ws, "git status", **rules) == "allow"
    for command in ["GIT_DIR=/tmp/x git status", "GIT_CONFIG_COUNT=1 git status", "env GIT_SSH_COMMAND=x git push",
                    "GIT_EXEC_PATH=. git push"]:  # fmt: skip
        assert kind(ws, command, **rules) == "ask", command
