"""What of the home folder a sandboxed command may read: the toolchains it runs, nothing else.

The home folder holds the user's keys (~/.ssh, ~/.aws, ~/.netrc, ...), so bubblewrap puts an empty
folder in its place and binds back, read-only, only what commands need to run: the toolchains on
PATH that live under home (pyenv, nvm, cargo + rustup, ~/.local/bin, ...), the interpreter a
virtual environment points at, git's ignore and attributes files, and the folders the user's
settings list (sandbox.read_paths); the user's git config only as a copy of its inert keys
(sandbox/gitconfig.py). Known secret files stay hidden even inside those.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from arnes.host.nofollow import read_regular
from arnes.sandbox.gitconfig import global_files

# A PATH entry under one of these binds the whole root (a shim needs its versions), plus companions.
TOOLCHAIN_ROOTS: dict[str, tuple[str, ...]] = {
    ".pyenv": (), ".rbenv": (), ".nodenv": (), ".nvm": (), ".fnm": (), ".volta": (), ".bun": (), ".deno": (),
    ".cargo": (".rustup",), ".rustup": (), ".sdkman": (), ".asdf": (), ".local/share/mise": (), ".ghcup": (),
    ".elan": (), ".juliaup": (), ".dotnet": (), ".opam": (), "go": (), "sdk": (), ".local/share/pnpm": (),
    ".local/share/fnm": (), ".local/bin": (".local/lib",), ".local/share/uv": (), ".local/share/pipx": (),
}  # fmt: skip
# Variables naming such roots directly.
TOOLCHAIN_VARIABLES = ("PYENV_ROOT", "NVM_DIR", "CARGO_HOME", "RUSTUP_HOME", "VOLTA_HOME", "GOPATH", "BUN_INSTALL")
# Read by git on every run, patterns only. The user's git config is not among them: it may hold
# credentials, and commands get a copy of its inert keys instead (sandbox/gitconfig.py).
CONFIG_FILES = (".config/git/ignore", ".config/git/attributes")
# Hidden even when a readable folder above contains them (relative to home).
SECRETS = (
    ".ssh", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".gnupg", ".netrc", ".git-credentials",
    ".config/git/credentials", ".npmrc", ".yarnrc", ".pypirc", ".gem/credentials", ".cargo/credentials",
    ".cargo/credentials.toml", ".config/gh", ".config/hub", ".local/share/keyrings", ".password-store",
    ".vault-token", ".pgpass", ".my.cnf", ".terraform.d/credentials.tfrc.json", ".config/anthropic",
    ".config/openai", ".config/arnes", ".m2/settings.xml", ".gradle/gradle.properties", ".env",
    ".claude.json", ".claude/.claude.json", ".claude/.credentials.json", ".claude/backups", ".gitconfig",
    ".claude/settings.json", ".claude/settings.local.json", ".claude/projects", ".claude/history.jsonl",
    ".config/git/config",
)  # fmt: skip


@dataclass(frozen=True)
class HomeView:
    """Folders and files under home that stay readable, and the secrets inside them to hide."""

    home: Path
    readable: tuple[Path, ...]
    secrets: tuple[Path, ...]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def toolchain_folders(entry: Path, home: Path) -> list[Path]:
    """The folders to bind for one PATH entry under home."""
    relative = entry.relative_to(home).as_posix()
    best = max((root for root in TOOLCHAIN_ROOTS if relative == root or relative.startswith(root + "/")), key=len,
               default=None)  # fmt: skip
    if best is None:
        return [entry]
    return [home / best, *(home / companion for companion in TOOLCHAIN_ROOTS[best])]


def venv_prefix(venv: Path) -> list[Path]:
    """The folder a virtual environment and its base interpreter live in (pyvenv.cfg `home`).

    A repository writes its own pyvenv.cfg, so `home` only picks an interpreter, never a folder:
    what is bound is the installation that interpreter's real file belongs to (the folder above
    its bin/ that holds the standard library, lib/pythonX.Y/os.py). `home = ~/.local/bin` then
    opens nothing of ~/.local (its python is a link into an installation elsewhere), and
    `home = ~/projects/bin` nothing at all.
    """
    found = [venv]
    try:  # through no link, and never a FIFO the repository put there (it would hold every command)
        data = read_regular(Path(os.path.realpath(venv / "pyvenv.cfg")), limit=64 << 10)[0]
    except (OSError, ValueError):
        return found
    lines = data.decode("utf-8", errors="replace").splitlines()
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip() and os.path.isabs(value.strip()):
            prefix = installation(Path(value.strip()))
            if prefix is not None:
                found.append(prefix)
    return found


def installation(bin_dir: Path) -> Path | None:
    """The root of the Python installation whose interpreter `bin_dir` holds, or None."""
    for name in ("python3", "python"):
        candidate = Path(os.path.realpath(bin_dir / name))
        if not (candidate.is_file() and os.access(candidate, os.X_OK)) or candidate.parent.name != "bin":
            continue
        prefix = candidate.parent.parent
        try:
            stdlib = [p for p in (prefix / "lib").glob("python3*") if (p / "os.py").is_file()]
        except OSError:
            stdlib = []
        if stdlib:
            return prefix
    return None


def workspace_venvs(workspace: Path) -> list[Path]:
    """Virtual environments directly in the workspace (.venv, venv, env, ...): one scandir."""
    found = []
    try:
        with os.scandir(workspace) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
                    found.append(Path(entry.path))
    except OSError:
        pass
    return found


def home_view(
    home: Path,
    environ: Mapping[str, str],
    venvs: Iterable[Path],
    read_paths: Iterable[Path],
    visible: Iterable[Path] = (),
) -> HomeView:
    """What stays readable under `home` for commands run with `environ` (its PATH and toolchain
    variables), the given virtual environments, and the user's extra `read_paths`; `visible` are
    folders mounted anyway (the workspace), whose secrets under home are hidden too."""
    candidates: list[Path] = []
    for raw in environ.get("PATH", "").split(os.pathsep):
        if raw and os.path.isabs(raw):
            candidates.append(Path(os.path.realpath(raw)))
    candidates += [Path(os.path.realpath(environ[v])) for v in TOOLCHAIN_VARIABLES if environ.get(v)]
    readable: list[Path] = []
    for path in candidates:
        if path != home and _inside(path, home):
            readable += toolchain_folders(path, home)
    for venv in [*venvs, *([Path(environ["VIRTUAL_ENV"])] if environ.get("VIRTUAL_ENV") else [])]:
        for folder in venv_prefix(Path(os.path.realpath(venv))):
            if folder not in (home, home / ".local") and _inside(folder, home):  # never a home-wide prefix
                readable.append(folder)
    readable += [home / name for name in CONFIG_FILES]
    extra = [Path(os.path.realpath(p)) for p in read_paths]
    readable += extra
    existing = sorted({p for p in readable if p.exists() and _inside(p, home) and p != home})
    # Drop what a shorter readable path already covers: fewer mounts.
    kept = [p for p in existing if not any(other != p and _inside(p, other) for other in existing)]
    secrets = []
    for named in [*(home / name for name in SECRETS), *global_files(home, environ)]:
        # A link is followed: its target is what would show (bwrap binds onto the target anyway).
        real = Path(os.path.realpath(named))
        if not real.exists() or any(_inside(chosen, named) for chosen in extra):
            continue  # absent, or the user listed the secret itself
        if any(_inside(real, folder) for folder in [*kept, *visible]):
            secrets.append(real)
    return HomeView(home, tuple(kept), tuple(sorted(set(secrets))))
