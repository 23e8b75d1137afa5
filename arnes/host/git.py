"""git as arnes itself runs it on the host (handoff, anything that asks the repository's state):
outside any sandbox, so it must run no repository code.

A repository chooses programs through its config: `core.fsmonitor` runs on every `git status`,
hooks, pagers, external diffs and textconv, clean/smudge filters, ssh commands for a lazy fetch.
A clone's `.git/config` is git's own, but a repository can still bring a config of its choosing:
a tarball with its `.git`, a nested `sub/.git` or submodule a command wrote, a `.git` gitfile
pointing at a planted folder, or a workspace laid out like a bare repository (HEAD, config,
objects/ at the top) that git would discover on its own. So here:

- git runs only on the workspace's own `.git` *folder* (not a link, not a gitfile), named
  explicitly with GIT_DIR and GIT_WORK_TREE: nothing is discovered, an implicit bare
  repository is never used (and `safe.bareRepository=explicit` refuses one anyway);
- command-line config, which wins over every file, turns off fsmonitor, hooks, pagers,
  transports and submodule recursion, and empties every filter driver the repository defines;
  diffs run with --no-ext-diff --no-textconv;
- the user's GIT_* variables are dropped (GIT_DIR, GIT_CONFIG_*, ... would redirect it);
- a `git` on PATH that lies inside the workspace is not run.
The user's own global config still applies: its programs are the user's choice.

A few state-writing subcommands (`git add`, `git commit`, ...) run on the host too, because
`.git` is read-only in the sandbox: gitwrite.py builds them on what is here.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from arnes.host.paths import host_program, is_inside, resolve_real, search_path

SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.askPass=",
    "credential.helper=",
    "core.sshCommand=false",
    "protocol.allow=never",
    # A repository's `protocol.file.allow=always` beats `protocol.allow=never`: each by name, too.
    *(f"protocol.{name}.allow=never" for name in ("file", "ext", "ssh", "git", "http", "https")),
    "safe.bareRepository=explicit",
    "submodule.recurse=false",
    "status.submoduleSummary=false",
    "diff.ignoreSubmodules=all",
    "gc.auto=0",
    "maintenance.auto=false",
    "log.showSignature=false",  # a signature check runs gpg.program, which the repository may name
)
# Read-only inspections only; each with the flags that keep repository programs out.
_DIFFS = ("--no-ext-diff", "--no-textconv", "--ignore-submodules=all")
SUBCOMMANDS: dict[str, tuple[str, ...]] = {
    "status": ("--ignore-submodules=all",),
    "diff": _DIFFS,
    "show": _DIFFS,
    "log": _DIFFS,
    "ls-files": (),
    "ls-tree": (),  # names only, for the permission checks (permissions/gitprobe.py)
    "rev-parse": (),
    "grep": ("--no-textconv", "--no-recurse-submodules"),
}
TIMEOUT = 60.0
# git-lfs settings that name no program. git-lfs (started by the user's own `filter.lfs`, which
# arnes leaves alone so LFS files stay pointers) also reads the repository's config, where
# `lfs.extension.*.clean`/`smudge` and `lfs.customtransfer.*.path` are programs it runs. Lower
# case, `*` for a subsection, as `git config --name-only` prints them.
LFS_INERT = frozenset(
    """lfs.repositoryformatversion lfs.url lfs.pushurl lfs.fetchinclude lfs.fetchexclude lfs.fetchrecentalways
    lfs.locksverify lfs.setlockablereadonly lfs.concurrenttransfers lfs.skipdownloaderrors lfs.allowincompletepush
    lfs.*.access lfs.*.locksverify""".split()
)


def unsafe_key(names: list[str]) -> str | None:
    """Why the repository's config keys keep git off the host whatever the command, or None: a
    git-lfs program of its choosing, or an include (its file may be one the sandbox writes, read
    again by git after arnes read it)."""
    program = lfs_program(names)
    if program is not None:
        return f"the repository's config sets {program}, a program git-lfs would run"
    include = next((n for n in names if n.lower() == "include.path" or _is_conditional_include(n)), None)
    if include is not None:
        return f"the repository's config sets {include}: git would read another file after arnes checked this one"
    return None


def _is_conditional_include(name: str) -> bool:
    section, _, rest = name.lower().partition(".")
    return section == "includeif" and rest.rpartition(".")[2] == "path"


def lfs_program(names: list[str]) -> str | None:
    """The first of the repository's keys that makes git-lfs run a program of its choosing, or None."""
    for name in names:
        section, _, rest = name.lower().partition(".")
        sub, _, key = rest.rpartition(".")
        if section == "lfs" and f"lfs.{'*.' if sub else ''}{key}" not in LFS_INERT:
            return name
    return None


@dataclass(frozen=True)
class Repository:
    """The workspace's own git folder, checked: a real folder directly in the workspace."""

    workspace: Path
    git_dir: Path
    git: str


def repository(workspace: Path) -> Repository | str:
    """The repository arnes may run git on, or why not (one line, for a report)."""
    ws = resolve_real(workspace)
    git_dir = ws / ".git"
    try:
        mode = os.lstat(git_dir).st_mode
    except FileNotFoundError:
        return "not a repository (no .git folder in the workspace)"
    except OSError as exc:
        return f".git cannot be read ({exc.strerror})"
    if stat.S_ISLNK(mode):
        return ".git is a link; arnes runs git only on the workspace's own .git folder"
    if not stat.S_ISDIR(mode):
        return ".git is a file pointing elsewhere (a worktree or submodule); arnes runs git only on a .git folder"
    git = host_program("git")
    if git is None:
        return "git is not installed"
    if is_inside(ws, resolve_real(Path(git))):
        return f"the git on PATH ({git}) is inside the workspace; arnes does not run it"
    return Repository(ws, git_dir, git)


def run_git(
    repo: Repository, args: list[str], timeout: float = TIMEOUT, folder: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run one read-only git subcommand on `repo` with repository code turned off.

    The output stays bytes: paths in it need not be UTF-8 and may hold any line break, so the
    caller asks for `-z` where it reads names and decodes them with os.fsdecode. When the
    repository's filter drivers cannot be read, git is not run (exit 128, the reason on stderr).
    `folder` (a folder of the workspace) is where git starts, so relative paths are read from it.
    """
    sub, rest = args[0], args[1:]
    if sub not in SUBCOMMANDS:
        raise ValueError(f"arnes runs only read-only git subcommands on the host, not {sub!r}")
    cwd = repo.workspace if folder is None else resolve_real(folder)
    if not is_inside(repo.workspace, cwd):
        raise ValueError(f"{folder} is not a folder of the workspace")
    env = environment(repo)
    names = repository_keys(repo)
    if isinstance(names, str):
        return subprocess.CompletedProcess([repo.git, sub], 128, b"", names.encode())
    said = unsafe_key(names)
    if said is not None:
        return subprocess.CompletedProcess([repo.git, sub], 128, b"", os.fsencode(f"{said}; arnes did not run git"))
    no_filters(env, names)
    argv = [repo.git, "--no-pager", *(a for item in SAFE_CONFIG for a in ("-c", item)), sub, *SUBCOMMANDS[sub], *rest]
    return subprocess.run(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
        check=False,
    )  # fmt: skip


def config_value(repo: Repository, key: str, timeout: float = TIMEOUT) -> str | None:
    """The value git would use for `key` in this repository (the user's and the repository's
    files), or None when no file sets it, or when git must not run in this repository (its
    config includes another file, which git would read first). Reading config runs nothing."""
    names = repository_keys(repo)
    if isinstance(names, str) or unsafe_key(names) is not None:
        return None
    done = subprocess.run(
        [repo.git, "-c", "safe.bareRepository=explicit", "config", "--get", "--end-of-options", key],
        cwd=repo.workspace, env=environment(repo), stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
        check=False,
    )  # fmt: skip
    return os.fsdecode(done.stdout).strip() if done.returncode == 0 else None


def environment(repo: Repository) -> dict[str, str]:
    """The user's environment without their GIT_* variables, naming the repository explicitly;
    PATH without the workspace's folders (an activated `.venv/bin` is writable in the sandbox)."""
    env = _without_git_variables()
    if "PATH" in env:  # git starts programs by name (git-lfs); none a sandboxed command wrote
        env["PATH"] = search_path(env["PATH"], repo.workspace)
    env.update(
        GIT_DIR=str(repo.git_dir),
        GIT_WORK_TREE=str(repo.workspace),
        GIT_CEILING_DIRECTORIES=str(repo.workspace.parent),
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",  # status does not write the index: arnes only looks
        GIT_NO_LAZY_FETCH="1",
        GIT_PAGER="cat",
    )
    return env


def _without_git_variables() -> dict[str, str]:
    """The user's environment without their GIT_* variables (GIT_DIR, GIT_CONFIG_*, ...), which
    would point git elsewhere or add config arnes did not check."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def repository_keys(repo: Repository) -> list[str] | str:
    """The names of the keys the repository's own config sets (its `config` and `config.worktree`;
    not the user's global and system files), or why they cannot be read. The files are read by
    name, before git is run in the repository at all.

    Each file is read with `git config --file F --no-includes`, started at / with no GIT_*
    variable, so no repository is set up: in one, git reads its config *with* its includes
    first, and an included file may be a FIFO a sandboxed process holds open (git would wait on
    it). An include itself keeps git off the host (`unsafe_key`). A name may hold any byte but LF
    and NUL: `-z` keeps each whole, and os.fsdecode gives back the very bytes when an override
    goes into the environment. Reading config runs nothing.
    """
    clean = _without_git_variables()
    names: list[str] = []
    for file in (repo.git_dir / "config", repo.git_dir / "config.worktree"):
        try:
            mode = os.lstat(file).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f".git/{file.name} cannot be read ({exc.strerror}); arnes did not run git"
        if not stat.S_ISREG(mode):
            return f".git/{file.name} is not a regular file; arnes did not run git"
        try:
            done = subprocess.run(
                [repo.git, "config", "--file", str(file), "--no-includes", "-z", "--name-only", "--list"],
                cwd="/", env=clean, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return "git config did not finish, so arnes could not turn off the repository's programs; git was not run"
        if done.returncode != 0:
            said = os.fsdecode(done.stderr).strip().rpartition("\n")[2] or f"exit {done.returncode}"
            return f"the repository's config could not be read ({said}); arnes did not run git"
        names += [os.fsdecode(name) for name in done.stdout.split(b"\0")[:-1]]
    return list(dict.fromkeys(names))


def no_filters(env: dict[str, str], names: list[str]) -> None:
    """Empty every clean/smudge/process filter driver the repository defines.

    A filter runs when git re-reads a file whose stat changed (`git status` does, `git add`
    always), and its driver name is the repository's to choose. The overrides go in the
    environment, one key and one value each: on the command line `-c filter.a=b.clean=` splits
    at the first `=`, and a driver named `a=b` would keep running.
    """
    defined = (name[len("filter.") :] for name in names if name.startswith("filter."))
    drivers = sorted({rest.rpartition(".")[0] for rest in defined if "." in rest})
    empty = (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false"))
    overrides = [(f"filter.{d}.{key}", value) for d in drivers for key, value in empty]
    env["GIT_CONFIG_COUNT"] = str(len(overrides))
    for i, (key, value) in enumerate(overrides):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value


def user_config_file(path: Path, timeout: float = 10.0) -> list[tuple[bytes, bytes | None]] | None:
    """The entries of one of the user's own config files (`~/.gitconfig`), in order, as git reads
    them: its `include.path`s followed (a conditional include matches nothing: no repository is
    named), each `(section[.subsection].name, value)`, the value None for a bare `name` (true).
    None when git is missing or does not read the file. Reading config runs nothing; git starts
    at / with the user's GIT_* variables dropped, so no repository's config is found or read."""
    git = host_program("git")
    if git is None:
        return None
    env = _without_git_variables()
    argv = [git, "-c", "safe.bareRepository=explicit", "config", "--file", str(path), "--includes", "--null", "--list"]
    try:
        done = subprocess.run(argv, cwd="/", env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                              check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    entries: list[tuple[bytes, bytes | None]] = []
    for item in done.stdout.split(b"\0")[:-1]:
        key, newline, value = item.partition(b"\n")
        entries.append((key, value if newline else None))
    return entries
