"""Red team, round 3, the file-name findings: hostile repositories against arnes, with the newest
code first (named files, Edit of unread files, the rename hint, YAML as JSON, Python syntax
checks, context clearing). Copied from the red team's tests/test_redteam_round3.py.

Each test builds a repository an attacker could publish (or ship as a tarball with its .git), runs
the real `arnes` command against the fake OpenAI-compatible server (which records every request)
or the scripted provider, and asserts the vendor's promise. They FAIL while the hole exists and
pass once it is fixed; the parameters named `control-*` pass today and show the check itself works.

The common root: text from the file system or from git is cut with `split("\\n")`/`splitlines()`
(which also breaks at \\r, \\v, \\f, \\x1c-\\x1e, \\x85, \\u2028, \\u2029) or decoded with
errors="replace", where the other side (ripgrep's paths, git's config) breaks lines differently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import run_arnes
from tests.fakes.llm_server import FakeLLMServer

KEYS = {"OPENAI_API_KEY": "test"}


def _requests(ws: Path, task: str, turns: list[dict[str, object]], *extra: str) -> tuple[int, str, list[str]]:
    """Run arnes on `ws` with the fake server; every request body, as text."""
    with FakeLLMServer(turns) as server:
        run = run_arnes("--provider", "openai", "--base-url", server.url + "/v1", "-w", str(ws), *extra, task,
                        env=KEYS)  # fmt: skip
        bodies = [json.dumps(body, ensure_ascii=False) for _, body in server.requests]
    return run.code, run.err, bodies


# -- 1. A file name with a newline in it smuggles a .gitignore'd path into the listing -------------


def test_a_newline_in_a_file_name_does_not_bring_a_gitignored_file_into_the_prompt(tmp_path: Path) -> None:
    """Medium. `workspace_files` splits `rg --files` on "\\n", so a repository file named
    "x\\nsecrets/prod.cfg" (and a folder "y\\nsecrets") adds the path `secrets/prod.cfg` to the
    listing although .gitignore hides it. named_files then shows the ignored file's content in the
    first request when the task names it (test_named_files checks that an ignored file is not).
    The session's listing also names the ignored files."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("secrets/\nlocal_settings.py\n")
    (ws / "local_settings.py").write_text("DB_PASSWORD = 'IGNORED_CANARY_1'\n")  # the user's own, ignored
    (ws / "secrets").mkdir()
    (ws / "secrets" / "prod.cfg").write_text("token = IGNORED_CANARY_2\n")
    (ws / "app.py").write_text("print('hi')\n")
    # What the hostile repository ships: two empty names with a newline in them.
    (ws / "x\nlocal_settings.py").write_text("")
    (ws / "y\nsecrets").mkdir()
    (ws / "y\nsecrets" / "prod.cfg").write_text("")
    code, err, bodies = _requests(ws, "Check local_settings.py and prod.cfg against app.py.", [{"text": "ok"}])
    assert code == 0, err
    first = bodies[0]
    assert "IGNORED_CANARY_1" not in first, "a .gitignore'd file's content reached the model"
    assert "IGNORED_CANARY_2" not in first, "a .gitignore'd file's content reached the model"
    assert "secrets/prod.cfg" not in first, "the listing names a .gitignore'd file"


def test_a_newline_in_a_file_name_does_not_let_grep_show_a_gitignored_file(tmp_path: Path) -> None:
    """Medium, same root cause in the search tools: with a path glob (`{config/local.yml,a/b}`)
    ripgrep's --glob overrides .gitignore, and Grep keeps only hits that `_listed` (`rg --files`,
    split on "\\n") names. A folder "x\\n." holding config/local.yml makes that listing say
    `./config/local.yml`, so the ignored file's lines are shown to the model."""
    ws = tmp_path / "ws"
    (ws / "config").mkdir(parents=True)
    (ws / ".gitignore").write_text("config/local.yml\n")
    (ws / "config" / "local.yml").write_text("password: GREP_CANARY\n")  # the user's, ignored
    (ws / "x\n." / "config").mkdir(parents=True)  # what the repository ships
    (ws / "x\n." / "config" / "local.yml").write_text("")
    script = tmp_path / "script.json"
    grep = {"pattern": "password", "glob": "{config/local.yml,a/b}", "output_mode": "content"}
    script.write_text(json.dumps({"turns": [{"tool_calls": [{"name": "Grep", "input": grep}]}, {"text": "done"}]}))
    trace = tmp_path / "trace.jsonl"
    done = run_arnes("-p", "--provider", "script", "--script", str(script), "-w", str(ws), "--trace", str(trace),
                     "go")  # fmt: skip
    assert done.code == 0, done.err
    assert "GREP_CANARY" not in trace.read_text(), "Grep showed a .gitignore'd file's content"


# -- 1b. A repository's .ignore un-ignores what the user's own ignore rules hide ------------------


def _user_excluded_workspace(tmp_path: Path) -> Path:
    """A clone with the user's own local secret, hidden by the user's .git/info/exclude (which no
    repository can ship), and the repository's `.ignore` that whitelists it again."""
    import subprocess

    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (ws / ".git" / "info" / "exclude").write_text("local_settings.py\n")  # the user's
    (ws / "local_settings.py").write_text("SECRET_KEY = 'EXCLUDE_CANARY'\n")  # the user's
    (ws / "app.py").write_text("from local_settings import SECRET_KEY\n")
    (ws / ".ignore").write_text("!local_settings.py\n")  # what the repository ships
    return ws


def test_a_repository_ignore_file_does_not_unhide_what_the_users_exclude_hides(tmp_path: Path) -> None:
    """Medium. ripgrep gives `.ignore`/`.rgignore` precedence over .gitignore, info/exclude and the
    global excludes file, and arnes's searches and listing read them (treewatch alone passes
    --no-ignore-dot, "a repository's .ignore/.rgignore do not count"). A cloned repository's
    `.ignore` with `!local_settings.py` makes the listing, the named files and Grep show a file the
    user's own .git/info/exclude hides: its content reaches the model with no Read."""
    ws = _user_excluded_workspace(tmp_path)
    grep = {"pattern": "SECRET_KEY", "output_mode": "content"}
    turns: list[dict[str, object]] = [{"tool_calls": [{"name": "Grep", "input": grep}]}, {"text": "ok"}]
    code, err, bodies = _requests(ws, "Where is SECRET_KEY used? Start with local_settings.py.", turns)
    assert code == 0, err
    assert "EXCLUDE_CANARY" not in bodies[0], "the named-files block showed a file info/exclude hides"
    assert "EXCLUDE_CANARY" not in bodies[-1], "Grep showed a file info/exclude hides"


# -- 1c. The sandbox's hidden files are read from ripgrep's output cut at any line break --------

LEAK_TEST = """import glob, unittest
class T(unittest.TestCase):
    def test_env(self):
        out = []
        for p in sorted(glob.glob("*/.env", include_hidden=True)) + [".env"]:
            try:
                with open(p) as f:
                    out.append((p, f.read()))
            except OSError as e:
                out.append((p, str(e)))
        self.fail(f"LEAK {out!r}")
"""


def _big_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "assets").mkdir(parents=True)
    for i in range(2100):  # past hidden.SMALL_TREE: ripgrep, not scandir, finds the denied files
        (ws / "assets" / f"icon{i}.svg").write_text("")
    (ws / "test_leak.py").write_text(LEAK_TEST)  # the repository's test: runs in the sandbox
    return ws


@pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="needs bubblewrap")
def test_a_denied_env_file_in_a_folder_with_a_line_break_in_its_name_stays_hidden(tmp_path: Path) -> None:
    """High. The sandbox hides what a Read deny rule covers (the built-in `Read(**/.env)` here);
    in a workspace of over 2,000 entries it finds those files with `rg --files` and
    `stdout.splitlines()` (sandbox/hidden.py `_matching`), which cuts at \\n and also at \\u2028,
    \\x85, \\x1c-\\x1e, \\v, \\f. The repository names its service folder `backend\\u2028` (shown as
    `backend`); the user's `.env` there is not hidden, the repository's test reads it in the
    sandbox, and the red verify output carries it to the model. The `.env` at the top stays hidden
    (the control)."""
    ws = _big_workspace(tmp_path)
    (ws / ".env").write_text("TOP_CANARY\n")  # the user's
    (ws / "backend\u2028").mkdir()
    (ws / "backend\u2028" / ".env").write_text("DB_PASSWORD=SANDBOX_CANARY\n")  # the user's, as the README said
    turns: list[dict[str, object]] = [{"text": "done"}, {"text": "done"}]
    _code, err, bodies = _requests(ws, "go", turns, "-p", "--verify", "auto", "--verify-rounds", "1")
    sent = "".join(bodies)
    assert "LEAK" in sent, err[-1500:]  # the verify output did reach the model
    assert "TOP_CANARY" not in sent  # the control: the top .env is hidden
    assert "SANDBOX_CANARY" not in sent, "a .env the built-in deny rule covers reached the model"


@pytest.mark.skipif(Bubblewrap.unavailable() is not None, reason="needs bubblewrap")
def test_a_file_name_that_is_not_utf8_does_not_crash_the_first_sandboxed_command(tmp_path: Path) -> None:
    """Low (denial of service). Same code: `subprocess.run(..., text=True)` decodes ripgrep's
    output strictly, so one folder name that is not UTF-8 (`legacy\\xff/`, with a `.env` in it)
    in a large workspace raises UnicodeDecodeError out of hidden_paths: arnes dies with a
    traceback at its first sandboxed command (here the verify command)."""
    import os

    ws = _big_workspace(tmp_path)
    os.mkdir(os.fsencode(str(ws)) + b"/legacy\xff")
    (Path(os.fsdecode(os.fsencode(str(ws)) + b"/legacy\xff")) / ".env").write_text("X=1\n")
    _code, err, _ = _requests(ws, "go", [{"text": "done"}, {"text": "done"}], "-p", "--verify", "auto",
                             "--verify-rounds", "1")  # fmt: skip
    assert "Traceback" not in err and "UnicodeDecodeError" not in err, err[-800:]


# -- 2. Team snapshots read whatever the newline-split listing names ------------------------------


def test_a_fifo_in_the_repository_does_not_hang_or_crash_a_team_run(tmp_path: Path) -> None:
    """Low (denial of service). Before and after each node `teams/snapshot.take` reads every file
    of `workspace_files` with `Path.read_bytes()`: no O_NONBLOCK, no regular-file check, links
    followed. rg never lists a FIFO or a link, but "x\\npipe" makes the split listing name `pipe`, a
    FIFO: the run blocks forever before the first node. (Named `zero` -> /dev/zero instead, it
    reads until memory runs out; not run here. Named `x\\n../f` it reads outside the workspace.)
    Without the newline name, the FIFO alone ends the run in a traceback (shutil.copytree refuses
    a named pipe when the read-only checker's copy is made)."""
    import os
    import subprocess

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("print(1)\n")
    os.mkfifo(ws / "pipe")
    (ws / "x\npipe").write_text("")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "done"}, {"text": "VERDICT: PASS"}]}))
    try:
        done = run_arnes("team", "run", "maker-checker", "--provider", "script", "--script", str(script), "-w",
                         str(ws), "fix app.py", timeout=30)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise AssertionError("arnes team run hung on a FIFO the repository ships") from None
    assert "Traceback" not in done.err, done.err[-800:]
    assert "team PASS" in done.out + done.err


# -- The same bug shape elsewhere: every ripgrep listing is cut at NUL, and .ignore never counts --


def _newline_named_copy(ws: Path) -> None:
    """The user's ignored config/local.yml, and the repository's "x\\n." folder that mirrors it."""
    (ws / "config").mkdir(parents=True)
    (ws / ".gitignore").write_text("config/local.yml\n")
    (ws / "config" / "local.yml").write_text("password: CANARY\n")
    (ws / "x\n." / "config").mkdir(parents=True)
    (ws / "x\n." / "config" / "local.yml").write_text("password: shipped\n")


def test_glob_and_grep_counts_do_not_name_a_gitignored_file_through_a_newline_in_a_name(tmp_path: Path) -> None:
    """Glob's and Grep's own streams were cut at newlines too: "x\\n./config/local.yml" printed
    `config/local.yml` as a line of its own (Glob on a file-name pattern, which needs no listing),
    and Grep's count mode showed the ignored file's count (the listing said it is searched). Now
    each name ends at a NUL, and one with a line break is shown escaped."""
    from arnes.tools.base import ToolContext
    from arnes.tools.search import Glob, Grep

    _newline_named_copy(tmp_path)
    ctx = ToolContext(tmp_path)
    listed = Glob().run(Glob.args_model(pattern="*.yml"), ctx).split("\n")
    assert listed == ["x\\n./config/local.yml"]
    counted = Grep().run(Grep.args_model(pattern="password", glob="{config/local.yml,a/b}", output_mode="count"), ctx)
    assert counted == "No matches for 'password' in the workspace.", counted  # the ignored file is not counted


def test_the_rename_hint_and_the_shell_listing_read_names_whole_and_not_dot_ignore(tmp_path: Path) -> None:
    """The rename hint (`... is still in: ...`) read a repository's .ignore, so it named a file the
    user's .git/info/exclude hides; the shell-change listing cut names at newlines and replaced
    bytes that are not UTF-8, so such a file never matched the tree walk's name for it."""
    import os

    from arnes.tools.base import ToolContext
    from arnes.tools.renames import still_named
    from arnes.tools.treewatch import _listed_by_ripgrep

    def rename_call(path: str) -> str:
        call = {"file_path": path, "old_string": "calc_total", "new_string": "order_total", "replace_all": True}
        return " To rename it there too, send:\n" + json.dumps({"name": "Edit", "arguments": call})

    ws = _user_excluded_workspace(tmp_path)
    (ws / "local_settings.py").write_text("calc_total = 1\n")
    (ws / "app.py").write_text("calc_total()\n")
    assert still_named(
        ToolContext(ws), "calc_total", "order_total"
    ) == " `calc_total` is still in: app.py (line 1)." + (rename_call("app.py"))
    odd = os.fsdecode(b"legacy\xff.py")
    (ws / odd).write_text("")
    (ws / "x\n.envrc").write_text("")
    listed = _listed_by_ripgrep(ws)
    assert listed is not None and {odd, "x\n.envrc", "app.py"} <= listed and "local_settings.py" not in listed


def test_the_sandbox_finds_denied_files_by_their_whole_exact_names(tmp_path: Path) -> None:
    """What hidden_paths and unwritable_paths both stand on: ripgrep's listing of the files a
    rule covers, past 2,000 entries. A folder "backend\\u2028" or "legacy\\xff" names its own .env."""
    import os

    from arnes.sandbox import hidden

    names = [os.fsdecode(b"legacy\xff"), "backend\u2028", "x\ny"]
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / ".env").write_text("X=1\n")
    found = hidden._matching(str(tmp_path), ["**/.env"], case_insensitive=True)
    assert sorted(found) == sorted(tmp_path / name / ".env" for name in names)
    assert all(path.exists() for path in found)
