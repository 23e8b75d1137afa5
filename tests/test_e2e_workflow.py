"""Verification as the finish line, through the `arnes` command: verify, features, ladder,
handoff, maker-checker and evals, each with a scripted model."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from arnes.agent.trace import read_trace
from arnes.sandbox.bubblewrap import Bubblewrap
from tests.conftest import run_arnes
from tests.test_sandbox import require


def call(name: str, **inp: Any) -> dict[str, Any]:
    return {"name": name, "input": inp}


def script(tmp_path: Path, turns: list[dict[str, Any]], name: str = "s.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


READ = {"tool_calls": [call("Read", file_path="pricing.py")]}
FIX = {"tool_calls": [call("Edit", file_path="pricing.py", old_string="0.10", new_string="0.15")]}


# -- verify ----------------------------------------------------------------------------------


def test_a_red_verify_goes_back_to_the_model_until_green(shop: Path, tmp_path: Path) -> None:
    turns = [{"text": "Done, I think."}, READ, FIX, {"text": "Now it is really done."}]
    trace = tmp_path / "t.jsonl"
    run = run_arnes(
        "--provider", "script", "--script", script(tmp_path, turns), "-w", str(shop), "--trace", str(trace),
        "--permission-mode", "acceptEdits", "--verify", "python -m unittest -q", "fix the discount",
    )  # fmt: skip
    assert run.code == 0, run.out + run.err
    events = read_trace(trace)
    verifies = [e for e in events if e["event"] == "verify"]
    assert [(v["round"], v["passed"]) for v in verifies] == [(1, False), (2, True)]
    feedback = [e for e in events if e["event"] == "message" and e["role"] == "user"][1]["content"][0]["text"]
    assert "python -m unittest -q" in feedback and "FAILED" in feedback and "round 1 of 3" in feedback
    assert events[-1]["event"] == "session_end" and events[-1]["verified"] is True
    assert "verified green" in run.out


def test_verify_that_stays_red_exits_4(shop: Path, tmp_path: Path) -> None:
    turns = [{"text": "done"}, {"text": "still done"}, {"text": "really"}]
    run = run_arnes(
        "--provider", "script", "--script", script(tmp_path, turns), "-w", str(shop), "--verify", "auto",
        "--verify-rounds", "1", "--output-format", "json", "x",
    )  # fmt: skip
    assert run.code == 4
    data = json.loads(run.out)
    assert data["verified"] is False and data["verify_rounds"] == 2  # the check, one fix round, the check


def test_verify_auto_detects_the_command_or_runs_without_one_and_says_so(shop: Path, tmp_path: Path) -> None:
    trace = str(tmp_path / "t.jsonl")
    run = run_arnes("--provider", "script", "--script", script(tmp_path, [READ, FIX]), "-w", str(shop),
                    "--permission-mode", "acceptEdits", "--verify", "auto", "--trace", trace, "x")  # fmt: skip
    assert run.code == 0
    assert [e["command"] for e in read_trace(tmp_path / "t.jsonl") if e["event"] == "verify"] == [
        "python -m unittest -q"
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    unverified = run_arnes(
        "--provider", "script", "--script", script(tmp_path, [{"text": "done"}]), "-w", str(empty), "--verify", "auto",
        "--trace", str(tmp_path / "e.jsonl"), "x",
    )  # fmt: skip
    assert unverified.code == 0 and "no verify command fits this workspace" in unverified.err
    assert "running without verification" in unverified.err
    assert not [e for e in read_trace(tmp_path / "e.jsonl") if e["event"] == "verify"]


# -- features --------------------------------------------------------------------------------


def features(ws: Path, *items: tuple[str, str, str, str]) -> None:
    data = {"features": [{"id": i, "description": d, "verify": v, "state": s} for i, d, v, s in items]}
    (ws / "features.json").write_text(json.dumps(data))


def states(ws: Path) -> dict[str, str]:
    return {f["id"]: f["state"] for f in json.loads((ws / "features.json").read_text())["features"]}


def test_next_works_one_feature_and_only_green_promotes_it(shop: Path, tmp_path: Path) -> None:
    features(
        shop,
        ("F01", "15 % discount", "python -m unittest -q", "not_started"),
        ("F02", "coupons", "false", "not_started"),
    )
    cheat = {"tool_calls": [call("Edit", file_path="features.json", old_string="not_started", new_string="passing")]}
    listing = run_arnes("-w", str(shop), "features")
    assert listing.code == 0 and "F01" in listing.out and "0/2 passing" in listing.out
    first = run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "done"}]), "-w", str(shop),
                      "--verify-rounds", "0", "--trust", "next")  # fmt: skip
    assert first.code == 4 and states(shop) == {"F01": "active", "F02": "not_started"}
    second = script(tmp_path, [cheat, READ, FIX, {"text": "ok"}], "s2.json")
    again = run_arnes("--provider", "script", "--script", second,
                      "-w", str(shop), "--permission-mode", "bypass", "--trust", "next")  # fmt: skip
    assert again.code == 0, again.out + again.err
    assert "continuing F01" in again.out and "F01 is passing" in again.out
    assert states(shop) == {"F01": "passing", "F02": "not_started"}  # the model's own edit was refused
    assert "features.json is protected" in again.out


def test_next_with_a_bad_feature_list_refuses(shop: Path) -> None:
    features(shop, ("F01", "a", "true", "active"), ("F02", "b", "true", "active"))
    run = run_arnes("-w", str(shop), "next")
    assert run.code == 2 and "WIP=1" in run.err


def test_an_empty_feature_list_reads_as_none(shop: Path) -> None:
    """An empty features.json (also the sandbox's stand-in while a session runs) is "no list", not bad JSON."""
    (shop / "features.json").write_text("")
    run = run_arnes("-w", str(shop), "features")
    assert run.code == 2 and "no features.json" in run.err and "not valid JSON" not in run.err


# -- ladder and handoff ----------------------------------------------------------------------


def test_check_stops_at_the_first_red_rung(shop: Path) -> None:
    (shop / ".arnes").mkdir()
    ladder = {"unit": "true", "integration": "echo broken; false", "e2e": "touch e2e-ran"}
    (shop / ".arnes" / "settings.json").write_text(json.dumps({"verify": {"ladder": ladder}}))
    run = run_arnes("--trust", "-w", str(shop), "check")
    assert run.code == 4
    assert "unit: true -> green" in run.out and "ladder stopped at integration" in run.out
    assert not (shop / "e2e-ran").exists()
    ladder["integration"] = "true"
    (shop / ".arnes" / "settings.json").write_text(json.dumps({"verify": {"ladder": ladder}}))
    assert run_arnes("--trust", "-w", str(shop), "check").code == 0 and (shop / "e2e-ran").exists()


def git(ws: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)


def test_handoff_lists_what_is_not_clean_and_says_clean_when_it_is(shop: Path) -> None:
    git(shop, "init", "-q")
    git(shop, "-c", "user.email=a@b", "-c", "user.name=a", "add", "-A")
    git(shop, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "start")
    (shop / "pricing.py.orig").write_text("old")
    run = run_arnes("--trust", "-w", str(shop), "handoff")
    assert run.code == 4 and "handoff: not clean" in run.out
    for reason in ("leftover temporary files: pricing.py.orig", "uncommitted changes", "PROGRESS.md is missing"):
        assert reason in run.out
    (shop / "pricing.py.orig").unlink()
    (shop / "PROGRESS.md").write_text("# Progress\n\n## Done\n- set up\n")
    git(shop, "-c", "user.email=a@b", "-c", "user.name=a", "add", "-A")
    git(shop, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "progress")
    (shop / ".arnes").mkdir(exist_ok=True)
    (shop / ".arnes" / "settings.json").write_text(json.dumps({"verify": {"command": "python -m unittest -q"}}))
    red = run_arnes("--trust", "-w", str(shop), "handoff")
    assert "tests is red" in red.out  # the shop's tests want 15 %
    (shop / ".arnes" / "settings.json").write_text(json.dumps({"verify": {"command": "true"}}))
    clean = run_arnes("--trust", "-w", str(shop), "handoff")
    assert clean.code == 0 and "handoff: clean" in clean.out


# -- maker-checker ---------------------------------------------------------------------------


def test_checker_fail_goes_back_to_the_implementer_then_passes(shop: Path, tmp_path: Path) -> None:
    turns = [
        READ,
        {"tool_calls": [call("Edit", file_path="pricing.py", old_string="RATE = 0.10", new_string="RATE = 0.15")]},
        {"text": "Done."},  # implementer, round 1
        {"tool_calls": [call("Read", file_path="pricing.py")]},
        {"text": "pricing.py:3 the comment still says 10 %.\nVERDICT: FAIL"},  # checker, round 1
        {"tool_calls": [call("Edit", file_path="pricing.py", old_string="(10 %)", new_string="(15 %)")]},
        {"text": "Fixed the comment."},  # implementer, round 2
        {"text": "All consistent now.\nVERDICT: PASS"},  # checker, round 2
    ]  # fmt: skip
    trace = tmp_path / "t.jsonl"
    run = run_arnes("--provider", "script", "--script", script(tmp_path, turns), "-w", str(shop), "--trace", str(trace),
                    "--permission-mode", "acceptEdits", "checker", "change the discount to 15 %")  # fmt: skip
    assert run.code == 0, run.out + run.err
    assert "checker: PASS after 2 round(s)" in run.out
    # The verdicts say why, on screen: the finding of the FAIL, then the PASS.
    fail_at, pass_at = run.out.index("checker round 1: FAIL"), run.out.index("checker round 2: PASS")
    assert fail_at < run.out.index("  pricing.py:3 the comment still says 10 %.") < pass_at
    assert run.out.index("  All consistent now.") > pass_at
    events = read_trace(trace)
    assert [e["verdict"] for e in events if e["event"] == "checker"] == ["FAIL", "PASS"]
    texts = [
        b.get("text", "")
        for e in events
        if e["event"] == "message" and e["role"] == "user" and "parent" not in e
        for b in e["content"]
    ]
    feedback = next(t for t in texts if "independent checker" in t)
    assert "the comment still says 10 %" in feedback and "round 1 of 3" in feedback
    checker_tools = {
        e["name"] for e in events if e.get("parent", "").startswith("checker") and e["event"] == "tool_call"
    }
    assert checker_tools == {"Read"}
    assert "(15 %)" in (shop / "pricing.py").read_text()


def test_checker_pass_does_not_count_while_tests_are_red(shop: Path, tmp_path: Path) -> None:
    turns = [{"text": "Done."}, {"text": "VERDICT: PASS"}] * 3
    run = run_arnes("--provider", "script", "--script", script(tmp_path, turns), "-w", str(shop), "checker", "fix it")
    assert run.code == 4 and "checker: FAIL after 3 round(s)" in run.out


# -- evals -----------------------------------------------------------------------------------


def test_builtin_evals_pass_with_their_scripts(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    run = run_arnes("--provider", "script", "eval", "--repeat", "2", "--workers", "2", "--out", str(out), timeout=300)
    assert run.code == 0, run.err
    report = json.loads(out.read_text())
    assert len(report["tasks"]) >= 8
    assert report["overall"] == report["overall"] | {"runs": 2 * len(report["tasks"]), "pass_rate": 1.0}
    assert all(t["turns_mean"] >= 2 and t["tokens_mean"] > 0 for t in report["tasks"].values())
    assert "overall" in run.out and "100%" in run.out


def test_eval_compare_shows_improvements_and_regressions(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    for name, content in (("good", "ok\n"), ("bad", "wrong\n")):
        (tasks / name / "workspace").mkdir(parents=True)
        (tasks / name / "task.md").write_text("write ok into out.txt\n")
        (tasks / name / "verify").write_text("grep -qx ok out.txt\n")
        (tasks / name / "script.json").write_text(
            json.dumps({"turns": [{"tool_calls": [call("Write", file_path="out.txt", content=content)]}]})
        )
    before = tmp_path / "a.json"
    assert run_arnes("--provider", "script", "eval", str(tasks), "--out", str(before)).code == 0
    (tasks / "bad" / "script.json").write_text(
        json.dumps({"turns": [{"tool_calls": [call("Write", file_path="out.txt", content="ok\n")]}]})
    )
    (tasks / "good" / "script.json").write_text(json.dumps({"turns": [{"text": "nothing"}]}))
    after = tmp_path / "b.json"
    assert run_arnes("--provider", "script", "eval", str(tasks), "--out", str(after)).code == 0
    assert json.loads(before.read_text())["tasks"]["bad"]["pass_rate"] == 0.0
    compared = run_arnes("eval", "compare", str(before), str(after))
    assert compared.code == 1  # a task regressed: the second report is worse
    assert "bad: 0% -> 100% (improved)" in compared.out and "good: 100% -> 0% (regressed)" in compared.out


def test_verify_commands_are_detected_by_project_kind(tmp_path: Path) -> None:
    from arnes.host.testcmd import detect

    cases = {
        "pyproject.toml": ("", "python -m pytest -q"),
        "package.json": ('{"scripts": {"test": "vitest"}}', "npm test"),
        "Cargo.toml": ("[package]", "cargo test"),
        "go.mod": ("module x", "go test ./..."),
        "Makefile": ("test:\n\ttrue\n", "make test"),
    }
    for name, (content, command) in cases.items():
        ws = tmp_path / name.replace(".", "_")
        ws.mkdir()
        (ws / name).write_text(content)
        found = detect(ws)
        assert found is not None and found.command == command
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "package.json").write_text("{}")  # no test script
    assert detect(bare) is None


def test_verify_auto_takes_the_command_from_settings(shop: Path, tmp_path: Path) -> None:
    (shop / ".arnes").mkdir()
    (shop / ".arnes" / "settings.json").write_text(json.dumps({"verify": {"command": "echo settings-verify; false"}}))
    trace = tmp_path / "t.jsonl"
    turns = script(tmp_path, [{"text": "done"}])
    run = run_arnes("--trust", "--provider", "script", "--script", turns, "-w", str(shop),
                    "--verify", "auto", "--verify-rounds", "0", "--trace", str(trace), "x")  # fmt: skip
    assert run.code == 4
    (verify,) = [e for e in read_trace(trace) if e["event"] == "verify"]
    assert verify["command"] == "echo settings-verify; false" and "settings-verify" in verify["output"]


def test_handoff_runs_the_build_and_notices_a_stale_progress_file(shop: Path) -> None:
    import os

    (shop / "PROGRESS.md").write_text("# Progress\n")
    old = 946684800  # 2000-01-01: older than every file of the shop
    os.utime(shop / "PROGRESS.md", (old, old))
    (shop / ".arnes").mkdir()
    (shop / ".arnes" / "settings.json").write_text(
        json.dumps({"verify": {"build": "echo building; false", "command": "true"}})
    )
    run = run_arnes("--trust", "-w", str(shop), "handoff")
    assert run.code == 4
    assert "build is red: `echo building; false`" in run.out
    assert "PROGRESS.md is older than the latest change" in run.out


def test_verify_paths_leave_no_sandbox_stand_ins_behind(shop: Path, tmp_path: Path) -> None:
    """The sandbox mounts an empty read-only .git and features.json where there were none; every
    path that runs a check must take them away again, or `arnes features` later finds a broken list."""
    require(Bubblewrap.unavailable())
    (shop / ".arnes").mkdir()
    (shop / ".arnes" / "settings.json").write_text(
        json.dumps({"verify": {"command": "true", "ladder": {"unit": "true"}}})
    )
    runs = [
        ("--provider", "script", "--script", script(tmp_path, [{"text": "done"}]), "--verify", "true", "x"),
        ("check",),
        ("handoff",),
        ("--provider", "script", "--script", script(tmp_path, [{"text": "ok"}], "c.json"), "checker", "x"),
    ]
    for args in runs:
        run_arnes("-w", str(shop), "--sandbox", "bubblewrap", *args)
        assert not (shop / ".git").exists() and not (shop / "features.json").exists(), args
    listing = run_arnes("-w", str(shop), "features")
    assert "not valid JSON" not in listing.out + listing.err
    (shop / "features.json").write_text(
        json.dumps({"features": [{"id": "f1", "description": "d", "verify": "true", "state": "not_started"}]})
    )
    run_arnes(
        "-w", str(shop), "--sandbox", "bubblewrap", "--provider", "script", "--script", script(tmp_path, []), "next"
    )
    assert not (shop / ".git").exists()
    assert json.loads((shop / "features.json").read_text())["features"][0]["state"] == "passing"


def test_a_feature_list_in_the_seed_shape_is_read_and_written_back_as_a_bare_list(shop: Path, tmp_path: Path) -> None:
    (shop / "features.json").write_text(
        json.dumps([{"id": "F01", "description": "suma", "verify": "true", "state": "not_started"}])
    )
    listing = run_arnes("-w", str(shop), "features")
    assert listing.code == 0 and "F01" in listing.out and "0/1 passing" in listing.out
    run = run_arnes("--provider", "script", "--script", script(tmp_path, [{"text": "done"}]), "-w", str(shop), "next")
    assert run.code == 0, run.out + run.err
    saved = json.loads((shop / "features.json").read_text())
    assert isinstance(saved, list) and saved[0]["state"] == "passing"


def test_a_tests_folder_means_pytest_only_where_pytest_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import venv

    from arnes.host.testcmd import detect

    ws = tmp_path / "proj"
    (ws / "tests").mkdir(parents=True)
    (ws / "tests" / "test_a.py").write_text(
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self): pass\n"
    )
    found = detect(ws)
    assert found is not None and found.command == "python -m pytest -q"  # this venv has pytest
    bare = tmp_path / "no-pytest"
    venv.create(bare, with_pip=False)
    monkeypatch.setenv("PATH", f"{bare / 'bin'}{os.pathsep}{os.environ['PATH']}")
    found = detect(ws)
    command = found.command if found else None
    assert command == "python -m unittest discover -q -s tests"
    run = run_arnes("-w", str(ws), "check", env={"PATH": os.environ["PATH"]})
    assert run.code == 0 and f"unit: {command} -> green" in run.out
