"""Programs that run other programs from their arguments: judged by what they run, or opaque.

`git -c alias.x='!rm v' x`, `git rebase --exec` (gitprograms.py), `sed '1e rm v'`,
`awk 'BEGIN{system("rm v")}'`, `tar --to-command=...`,
`find -exec`, `rg --pre`: the program named in an argument is what runs, so it is handed back to
the parser as a nested command line (deny rules see it; no allow rule covers it). What cannot be
read from the words (a script file, a computed string, a shell alias from a config file) is
opaque, and an opaque command asks.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from arnes.permissions.gitnames import GIT_BUILTINS
from arnes.permissions.gitprograms import git_programs

COMPUTED = "$?"
AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})


@dataclass
class Inner:
    scripts: list[str] = field(default_factory=list)  # shell command lines it runs
    commands: list[list[str]] = field(default_factory=list)  # programs it runs, as words
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)


def inner_programs(words: list[str], env: list[str]) -> Inner:
    inner = Inner()
    name = words[0].rsplit("/", 1)[-1] if words else ""
    if name == "git":
        _git(words, env, inner)
    elif name == "sed":
        _sed(words, inner)
    elif name in AWKS:
        _awk(words, inner)
    elif name in ("tar", "gtar", "bsdtar"):
        _tar(words, inner)
    elif name == "find":
        inner.commands += find_actions(words)
    elif name == "watch":
        _watch(words, inner)
    elif name == "rg":
        for option in ("--pre", "--hostname-bin"):
            for value in option_values(words, option):
                inner.commands.append([value, COMPUTED] if option == "--pre" else [value])
    return inner


def option_values(words: list[str], option: str, short: str | None = None) -> list[str]:
    """Values of `--opt=V`, `--opt V` (any unambiguous prefix, as GNU tools take), `-X V`, `-XV`."""
    found, i = [], 1
    while i < len(words):
        word = words[i]
        if word == "--":
            break
        head = word.split("=", 1)[0]
        if len(head) > 3 and head.startswith("--") and option.startswith(head):
            if "=" in word:
                found.append(word.split("=", 1)[1])
            elif i + 1 < len(words):
                found.append(words[i + 1])
                i += 1
        elif short and word == short and i + 1 < len(words):
            found.append(words[i + 1])
            i += 1
        elif short and word.startswith(short) and not word.startswith("--"):
            found.append(word[len(short) :])
        i += 1
    return found


# -- git ---------------------------------------------------------------------------------------
# Configuration keys whose value is a program or a file git reads as more configuration.
_GIT_CODE_KEY = re.compile(
    r"^(alias\.|include|core\.(fsmonitor|pager|editor|sshcommand|askpass|hookspath|gitproxy|worktree|"
    r"alternaterefscommand)|pager\.|diff\.|merge\.|filter\.|credential|gpg\.|sequence\.|interactive\.|"
    r"uploadpack\.|remote\..*\.(uploadpack|receivepack|vcs)|protocol\.|url\.|sendemail\.|web\.|browser\.|man\.|"
    r"difftool\.|mergetool\.|submodule\.|ssh\.|http\.)",
    re.IGNORECASE,
)
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env",
                                "--super-prefix", "--list-cmds", "--attr-source"})  # fmt: skip


def git_split(words: list[str]) -> tuple[list[tuple[str, str]], int]:
    """The `-c key=value` settings before git's subcommand, and the subcommand's index."""
    settings: list[tuple[str, str]] = []
    i = 1
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        key = word.split("=", 1)[0]
        if key in _GIT_VALUE_OPTIONS and "=" not in word and i + 1 < len(words):
            value = words[i + 1]
            if key == "-c":
                settings.append((value.split("=", 1)[0].lower(), value.split("=", 1)[1] if "=" in value else "true"))
            elif key == "--config-env":
                settings.append((value.split("=", 1)[0].lower(), COMPUTED))
            i += 2
            continue
        if key == "--config-env":
            settings.append((word.split("=", 1)[1].split("=", 1)[0].lower(), COMPUTED))
        i += 1
    return settings, i


def _git(words: list[str], env: list[str], inner: Inner) -> None:
    if any(v.split("=", 1)[0].startswith(("GIT_CONFIG", "GIT_EXEC_PATH", "GIT_ALIAS")) for v in env):
        inner.opaque.append("git with configuration from the environment can run any program")
    settings, index = git_split(words)
    if any(w.startswith("--exec-path=") for w in words[1:index]):
        inner.opaque.append("git --exec-path= runs git's own programs (transports, helpers) from a folder it names")
    sub = words[index] if index < len(words) else None
    aliases = {k[len("alias.") :]: v for k, v in settings if k.startswith("alias.")}
    for key, _ in settings:
        if _GIT_CODE_KEY.match(key) and not key.startswith("alias."):
            inner.opaque.append(f"git -c {key} can make git run a program")
    if sub is None or sub == COMPUTED:
        return
    if sub in aliases:
        value, rest = aliases[sub], words[index + 1 :]
        if value == COMPUTED:
            inner.opaque.append(f"git alias {sub} comes from the environment")
        elif value.startswith("!"):
            inner.scripts.append(" ".join([value[1:], *(shlex.quote(w) for w in rest)]))
        else:
            try:
                inner.commands.append([words[0], *shlex.split(value), *rest])
            except ValueError:
                inner.opaque.append(f"git alias {sub} cannot be read")
    elif sub not in GIT_BUILTINS:
        inner.opaque.append(f"git {sub} is not a git command here: it may be an alias or a git-{sub} program")
    else:
        runs = git_programs(sub, words[index + 1 :])
        inner.scripts += runs.scripts
        inner.commands += runs.commands
        inner.opaque += runs.opaque


# -- sed ---------------------------------------------------------------------------------------
_SED_VALUE = frozenset({"-e", "--expression", "-f", "--file", "-l", "--line-length"})


def _sed(words: list[str], inner: Inner) -> None:
    scripts: list[str] = []
    sandboxed = any(w == "--sandbox" for w in words[1:])
    i, positional = 1, []
    while i < len(words):
        word = words[i]
        if word in ("-e", "--expression") and i + 1 < len(words):
            scripts.append(words[i + 1])
            i += 1
        elif word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
        elif word in ("-f", "--file") or (word.startswith(("--file=", "-f")) and not word.startswith("--")):
            inner.opaque.append("sed -f runs a script file nobody can read here")
        elif word.startswith("-e") and len(word) > 2:
            scripts.append(word[2:])
        elif word in _SED_VALUE:
            i += 1
        elif not word.startswith("-") or word == "-":
            positional.append(word)
        i += 1
    if not scripts and positional:
        scripts.append(positional[0])
    if sandboxed:
        return
    for script in scripts:
        if script == COMPUTED or "$?" in script:
            inner.opaque.append("a sed script computed at run time")
        else:
            _sed_script(script, inner)


def _sed_script(script: str, inner: Inner) -> None:
    """Walk sed's commands: `e` runs a command, `w`/`W` write files, `r`/`R` read them, and the
    `e` and `w` flags of `s` do the same. What this walk cannot follow is opaque."""
    i, n = 0, len(script)
    while i < n:
        ch = script[i]
        if ch in " \t\n;!{}":
            i += 1
            continue
        if ch.isdigit() or ch in "$,~+":
            i += 1
            continue
        if ch == "/" or (ch == "\\" and i + 1 < n):
            delim = "/" if ch == "/" else script[i + 1]
            end = _sed_delimited(script, i + (1 if ch == "/" else 2), delim)
            if end is None:
                inner.opaque.append("a sed address nobody can read here")
                return
            i = end + 1
            continue
        if ch == "#":
            i = _line_end(script, i)
            continue
        i += 1
        if ch in "aic":  # text to the end of the line
            i = _line_end(script, i)
        elif ch in "btT:":
            i = _sed_label_end(script, i)
        elif ch in "wWrR":
            target = script[i : _line_end(script, i)].strip()
            (inner.writes if ch in "wW" else inner.reads).append(target)
            i = _line_end(script, i)
        elif ch == "e":
            command = script[i : _line_end(script, i)].strip()
            if command:
                inner.scripts.append(command)
            else:
                inner.opaque.append("sed e runs its pattern space as a command")
            i = _line_end(script, i)
        elif ch in "sy":
            if i >= n:
                return
            delim = script[i]
            middle = _sed_delimited(script, i + 1, delim)
            end = _sed_delimited(script, middle + 1, delim) if middle is not None else None
            if end is None:
                inner.opaque.append(f"a sed {ch} command nobody can read here")
                return
            i = end + 1
            if ch == "s":
                i = _sed_flags(script, i, inner)
        elif ch in "qQlLz=dDgGhHnNpPx" or ch.isspace():
            continue
        elif ch == "v" or ch == "F":
            i = _sed_label_end(script, i)
        else:
            inner.opaque.append(f"sed command {ch!r} is not one this walk knows")
            return


def _sed_flags(script: str, i: int, inner: Inner) -> int:
    n = len(script)
    while i < n and script[i] not in ";\n}":
        flag = script[i]
        if flag == "e":
            inner.opaque.append("sed s///e runs the pattern space as a command")
        elif flag == "w":
            inner.writes.append(script[i + 1 : _line_end(script, i)].strip())
            return _line_end(script, i)
        i += 1
    return i


def _sed_delimited(script: str, i: int, delim: str) -> int | None:
    while i < len(script):
        if script[i] == "\\":
            i += 2
            continue
        if script[i] == delim:
            return i
        if script[i] == "\n":
            return None
        i += 1
    return None


def _line_end(script: str, i: int) -> int:
    end = script.find("\n", i)
    return len(script) if end < 0 else end


def _sed_label_end(script: str, i: int) -> int:
    while i < len(script) and script[i] not in ";\n}":
        i += 1
    return i


# -- awk ---------------------------------------------------------------------------------------
_AWK_VALUE = frozenset({"-F", "-v", "--assign", "--field-separator"})
_AWK_CODE = ("-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec", "--source")
_AWK_STRING = r'"((?:[^"\\\n]|\\.)*)"'
_AWK_SYSTEM = re.compile(r"\bsystem\s*\(\s*" + _AWK_STRING + r"\s*\)")
_AWK_TO_PIPE = re.compile(r"\|&?\s*" + _AWK_STRING)
_AWK_FROM_PIPE = re.compile(_AWK_STRING + r"\s*\|&?\s*getline")
_AWK_WRITE = re.compile(r">>?\s*" + _AWK_STRING)
_AWK_READ = re.compile(r"getline\b[^<;}\n]*<\s*" + _AWK_STRING)


def _awk(words: list[str], inner: Inner) -> None:
    i, program = 1, None
    while i < len(words):
        word = words[i]
        if word == "--":
            program = words[i + 1] if i + 1 < len(words) else None
            break
        if any(word == o or word.startswith(o + "=") or (o[1] != "-" and word.startswith(o)) for o in _AWK_CODE):
            inner.opaque.append("awk with a program file or an extension nobody can read here")
            return
        if word in _AWK_VALUE:
            i += 2
            continue
        if word.startswith("-") and word != "-":
            i += 1
            continue
        program = word
        break
    if program is None or COMPUTED in program:
        inner.opaque.append("an awk program nobody can read here")
        return
    for pattern, kind in ((_AWK_SYSTEM, "run"), (_AWK_TO_PIPE, "run"), (_AWK_FROM_PIPE, "run"),
                          (_AWK_WRITE, "write"), (_AWK_READ, "read")):  # fmt: skip
        for match in pattern.finditer(program):
            value = match.group(1).replace('\\"', '"').replace("\\\\", "\\")
            {"run": inner.scripts, "write": inner.writes, "read": inner.reads}[kind].append(value)
    plain = _AWK_SYSTEM.sub("", _AWK_TO_PIPE.sub("", _AWK_FROM_PIPE.sub("", _AWK_WRITE.sub("", program))))
    if re.search(r"\bsystem\b|\|", plain):
        inner.opaque.append("awk runs a command built at run time (system() or a pipe)")
    if re.search(r">\s*[A-Za-z_($]", plain):
        inner.opaque.append("awk may write to a file whose name is computed")
    if re.search(r"\bgetline\b[^;}\n]*<|@load|@include", plain):
        inner.opaque.append("awk reads a file or loads code nobody can read here")


# -- tar ---------------------------------------------------------------------------------------
_TAR_PROGRAMS = ("--to-command", "--use-compress-program", "--info-script", "--new-volume-script",
                 "--rsh-command", "--rmt-command")  # fmt: skip


def _tar(words: list[str], inner: Inner) -> None:
    values = [v for o in _TAR_PROGRAMS for v in option_values(words, o)]
    values += option_values(words, "--use-compress-program", "-I") + option_values(words, "--info-script", "-F")
    for action in option_values(words, "--checkpoint-action"):
        if action.startswith("exec="):
            values.append(action[5:])
    if len(words) > 1 and not words[1].startswith("-") and set(words[1]) & set("IF"):
        inner.opaque.append("tar's old-style options name a program nobody can read here")
    for value in values:
        if COMPUTED in value:
            inner.opaque.append("tar runs a program whose name is computed")
        else:
            inner.scripts.append(value)


# -- watch -----------------------------------------------------------------------------------
_WATCH_VALUE = frozenset({"-n", "--interval", "-d", "--differences", "-q", "--equexit"})


def _watch(words: list[str], inner: Inner) -> None:
    """`watch CMD ARGS`: the words joined are a line for `sh -c`; with -x they are the command."""
    i, direct = 1, False
    while i < len(words) and words[i].startswith("-"):
        direct = direct or words[i] in ("-x", "--exec") or (_short_has(words[i], "x"))
        i += 2 if words[i] in _WATCH_VALUE else 1
    rest = words[i:]
    if not rest:
        return
    if direct:
        inner.commands.append(rest)
    elif any(COMPUTED in w for w in rest):
        inner.opaque.append("watch runs a command line computed at run time")
    else:
        inner.scripts.append(" ".join(rest))


def _short_has(word: str, letter: str) -> bool:
    return not word.startswith("--") and letter in word[1:]


# -- find --------------------------------------------------------------------------------------
def find_actions(words: list[str]) -> list[list[str]]:
    """The commands `find -exec/-execdir/-ok/-okdir CMD ... ;` runs, as word lists."""
    found: list[list[str]] = []
    i = 0
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i + 1
            while end < len(words) and words[end] not in (";", "+", "\\;"):
                end += 1
            if end > i + 1:
                found.append(words[i + 1 : end])
            i = end
        i += 1
    return found
