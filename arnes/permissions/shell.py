"""Split and classify shell commands on a real parser (tree-sitter-bash), never on regexes.

A command line becomes a list of simple commands (through `&& || ; | &`, newlines, subshells,
brace groups, `$(...)`, backticks, `<(...)`, here-docs, `bash -c '...'` and `eval '...'` with a
literal argument), each with its wrappers (`timeout`, `nice`, `env X=1`, `nohup`, `xargs`, ...)
looked through, plus the files its redirections write. What the parser cannot see into is
marked opaque, and an opaque command always asks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

WRITE_REDIRECTS = {">", ">>", "&>", "&>>", ">|", ">&", "<>"}
READ_REDIRECTS = {"<", "<>", "<&"}
CWD_CHANGERS = {"cd", "pushd", "popd"}
# Builtins that run a string as code or evaluate array subscripts in their arguments.
EVALUATES_ARGUMENTS = frozenset(
    "trap mapfile readarray let read wait getopts hash coproc builtin enable alias unalias complete "
    "compgen fc bind unset declare typeset local export readonly shopt set".split()
)
SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
# Environment variables that change what a command does; a command prefixed with one is not
# allowed by a rule written for the bare command.
RISKY_ENV = {"PATH", "BASH_ENV", "ENV", "IFS", "PROMPT_COMMAND", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS",
             "PERL5OPT", "RUBYOPT", "GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_CONFIG_GLOBAL", "EDITOR",
             "PAGER", "GIT_PAGER"}  # fmt: skip


@dataclass
class SimpleCommand:
    """One command as it would run: wrappers and assignments peeled off `words`."""

    words: list[str]
    wrappers: list[str] = field(default_factory=list)
    env: list[str] = field(default_factory=list)
    nested: bool = False  # inside $(...), backticks, <(...), eval or `sh -c`: never allowed by a rule
    unknown_args: bool = False  # xargs appends arguments nobody can see here

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def privileged(self) -> bool:
        """Run as another user: never read-only, never allowed by a rule for the bare command."""
        return any(w in ("sudo", "doas") for w in self.wrappers)

    @property
    def risky_env(self) -> bool:
        return any(v.split("=", 1)[0] in RISKY_ENV or v.startswith(("LD_", "DYLD_")) for v in self.env)


@dataclass
class ShellAnalysis:
    commands: list[SimpleCommand] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # redirect and tee targets, as written
    reads: list[str] = field(default_factory=list)  # input redirect sources (`< file`), as written
    changes_directory: bool = False  # a cd/pushd/popd: relative paths after it are not the workspace's
    opaque: list[str] = field(default_factory=list)  # why parts could not be looked into
    error: str | None = None


@cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def analyse(command: str) -> ShellAnalysis:
    result = ShellAnalysis()
    _analyse_into(command, result, nested=False, depth=0)
    return result


def _analyse_into(source: str, result: ShellAnalysis, *, nested: bool, depth: int) -> None:
    if depth > 4:
        result.opaque.append("shell nested too deeply")
        return
    tree = _parser().parse(source.encode())
    if tree.root_node.has_error:
        result.error = "the command could not be parsed"
        return
    _Walker(result, nested, depth).visit(tree.root_node)


class _Walker:
    def __init__(self, result: ShellAnalysis, nested: bool, depth: int):
        self.result, self.nested, self.depth = result, nested, depth

    def visit(self, node: Node, nested: bool | None = None) -> None:
        inner = self.nested if nested is None else nested
        kind = node.type
        if kind == "command":
            self._command(node, inner)
        elif kind in ("command_substitution", "process_substitution"):
            for child in node.named_children:
                self.visit(child, True)
        elif kind == "file_redirect":
            self._redirect(node, inner)
        elif kind == "function_definition":
            self.result.opaque.append("defines a shell function")
            for child in node.named_children:  # its body is still looked into for denied commands
                self.visit(child, True)
        elif _evaluates(node):
            # export/declare, bare assignments, [[ ]] and (( )) evaluate array subscripts and change
            # what later commands do: never read-only, never allowed by a rule.
            text = (node.text or b"").decode(errors="replace")
            word = text.split(maxsplit=1)[0] if kind == "declaration_command" else f"({kind})"
            self.result.commands.append(SimpleCommand([word], nested=inner))
            if any(mark in text for mark in ("$(", "`", "[", "@P")):
                # a subscript or a string that bash evaluates: code nobody can read here
                self.result.opaque.append(f"{word} evaluates text as code")
            for child in node.named_children:
                self.visit(child, inner)
        else:
            for child in node.named_children:
                self.visit(child, inner)

    def _redirect(self, node: Node, nested: bool) -> None:
        operator = next((c.type for c in node.children if not c.is_named), "")
        destination = node.child_by_field_name("destination")
        if destination is None:
            return
        target = literal(destination) if destination.type != "number" else None
        if operator in WRITE_REDIRECTS and destination.type != "number":
            if target is None:
                self.result.opaque.append("writes to a file whose name is computed")
            elif target != "/dev/null":
                self.result.writes.append(target)
        if operator in READ_REDIRECTS and destination.type != "number":
            if target is None:
                self.result.opaque.append("reads a file whose name is computed")
            elif target != "/dev/null":
                self.result.reads.append(target)
        self.visit(destination, nested)

    def _command(self, node: Node, nested: bool) -> None:
        env: list[str] = []
        words: list[str | None] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                env.append(child.text.decode(errors="replace") if child.text else "")
                for part in child.named_children:  # its value, not the assignment as a statement
                    self.visit(part, nested)
            elif child.type == "file_redirect":
                self._redirect(child, nested)
            elif child.type == "command_name":
                words.append(literal(child))
                self.visit(child, nested)
            else:
                words.append(literal(child))
                self.visit(child, nested)
        if not words:
            return
        if words[0] is None:
            self.result.opaque.append("the command name is computed at run time")
            return
        if set(words[0]) & set("*?[{"):
            self.result.opaque.append("the command name is a pattern the shell expands")
            return
        self._add(SimpleCommand([w if w is not None else "$?" for w in words], env=env, nested=nested))

    def _add(self, cmd: SimpleCommand) -> None:
        problem = unwrap(cmd)
        if problem:
            self.result.opaque.append(problem)
        if not cmd.words:
            return
        name = cmd.words[0]
        if name in CWD_CHANGERS:
            self.result.changes_directory = True
        if name in EVALUATES_ARGUMENTS or (
            name in ("printf", "test", "[") and any(w.startswith("-v") for w in cmd.words)
        ):
            self.result.opaque.append(f"{name} can evaluate its arguments as code")
        if name == "find":
            for inner in _find_actions(cmd.words):
                self._add(SimpleCommand(inner, nested=True))
        if name in SHELLS and "-c" in cmd.words[1:]:
            script_index = cmd.words.index("-c") + 1
            script = cmd.words[script_index] if script_index < len(cmd.words) else None
            if script is None or "$?" in script:
                self.result.opaque.append(f"{name} -c with a script nobody can read here")
            else:
                _analyse_into(script, self.result, nested=True, depth=self.depth + 1)
            cmd.nested = True
        elif name == "eval":
            script = " ".join(cmd.words[1:])
            if "$?" in script:
                self.result.opaque.append("eval of a computed string")
            else:
                _analyse_into(script, self.result, nested=True, depth=self.depth + 1)
            cmd.nested = True
        elif name in ("source", "."):
            self.result.opaque.append(f"{name} runs a script nobody can read here")
        elif name in SHELLS:
            self.result.opaque.append(f"{name} runs a script from standard input or a file")
        elif name == "tee":
            self.result.writes += [w for w in cmd.words[1:] if not w.startswith("-") and w != "/dev/null"]
        self.result.commands.append(cmd)


def literal(node: Node) -> str | None:
    """The word's value after quote removal, or None when it depends on expansion at run time."""
    kind = node.type
    text = node.text.decode(errors="replace") if node.text else ""
    if kind in ("word", "number", "command_name"):
        if kind == "command_name":
            return literal(node.named_children[0]) if node.named_children else None
        return _unescape(text)
    if kind == "raw_string":
        return text[1:-1]
    if kind == "string":
        parts = []
        for child in node.named_children:
            if child.type != "string_content":
                return None
            parts.append(child.text.decode(errors="replace") if child.text else "")
        return "".join(parts)
    if kind == "concatenation":
        pieces = [literal(c) for c in node.named_children]
        return None if any(p is None for p in pieces) else "".join(p for p in pieces if p is not None)
    if kind == "ansi_c_string":
        return _ansi_c(text[2:-1])
    return None


def _ansi_c(body: str) -> str | None:
    """$'...': the escapes bash decodes, so `$'rm'` is seen as `rm`."""
    try:
        return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return None


def _find_actions(words: list[str]) -> list[list[str]]:
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


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# -- wrappers --------------------------------------------------------------------------------
# name -> (options that take a value, how many leading positional words belong to the wrapper)
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "command": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "ionice": (frozenset({"-c", "-n", "--class", "--classdata"}), 0),
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),
    "setsid": (frozenset(), 0),
    "sudo": (frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "flock": (frozenset({"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"}), 1),
    "busybox": (frozenset(), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "unbuffer": (frozenset(), 0),
    "watch": (frozenset({"-n", "--interval", "-d", "--differences"}), 0),
    "unshare": (
        frozenset({"--propagation", "--setgroups", "-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd"}),
        0,
    ),
    "strace": (frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-O", "-S", "-X"}), 0),
    "script": (
        frozenset(
            {
                "-E",
                "--echo",
                "-I",
                "--log-in",
                "-O",
                "--log-out",
                "-B",
                "--log-io",
                "-T",
                "--log-timing",
                "-m",
                "--logging-format",
                "-o",
                "--output-limit",
            }
        ),
        0,
    ),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "nsenter": (frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd", "-r", "--root"}), 0),
    "runuser": (frozenset({"-u", "--user", "-g", "--group"}), 0),
    "xargs": (
        frozenset(
            """-a -d -E -e -I -i -L -l -n -P -s --arg-file --delimiter --max-args --max-procs --max-lines
            --replace --max-chars --eof""".split()
        ),
        0,
    ),
}


OPAQUE_OPTIONS = {
    "env": ("-S", "--split-string"),  # a whole command line packed in one argument
    "flock": ("-c", "--command"),
    "sudo": ("-s", "--shell", "-i", "--login"),
    "script": ("-c", "--command"),
    "runuser": ("-c", "--command"),
}


# Node kinds that only structure commands and words. Anything else (assignments, declarations,
# unset, [[ ]], (( )), $(( )), ${x:=...}, ${x@P}, ...) can evaluate code or change what later
# commands do: it is recorded as a command that is never read-only and never allowed by a rule.
# An allow-list, so a construct nobody thought of is "not read-only", not "fine".
STRUCTURAL = frozenset(
    """program list pipeline command command_name word string string_content raw_string ansi_c_string
    concatenation number simple_expansion variable_name special_variable_name file_redirect
    file_descriptor heredoc_redirect heredoc_start heredoc_body heredoc_content heredoc_end
    herestring_redirect redirected_statement subshell compound_statement command_substitution
    process_substitution negated_command if_statement elif_clause else_clause for_statement do_group
    while_statement case_statement case_item comment regex extglob_pattern""".split()
)
_SIMPLE_EXPANSION = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


def _evaluates(node: Node) -> bool:
    if node.type == "expansion":
        return not _SIMPLE_EXPANSION.match((node.text or b"").decode(errors="replace"))
    if node.type == "compound_statement":
        return (node.text or b"").lstrip().startswith(b"((")
    return node.type not in STRUCTURAL


def _has_option(word: str, option: str) -> bool:
    """`--long`, `--long=x`, or a short option anywhere in a bundle (`-iS` has `-S`)."""
    if option.startswith("--"):
        return word == option or word.startswith(option + "=")
    return word.startswith("-") and not word.startswith("--") and option[1] in word[1:]


def unwrap(cmd: SimpleCommand) -> str | None:
    """Peel wrappers off the front of `cmd.words` (looked through, not trusted).

    Returns a reason when a wrapper hides its command in a way that cannot be read here.
    """
    while cmd.words and cmd.words[0].rsplit("/", 1)[-1] in WRAPPERS:
        name = cmd.words[0].rsplit("/", 1)[-1]
        takes_value, positional = WRAPPERS[name]
        opaque = OPAQUE_OPTIONS.get(name, ())
        if any(_has_option(w, o) for w in cmd.words[1:] for o in opaque):
            cmd.wrappers.append(name)
            cmd.words = []
            return f"{name} with {'/'.join(opaque)} runs a command line that cannot be checked here"
        i = 1
        while i < len(cmd.words):
            word = cmd.words[i]
            if word == "--":
                i += 1
                break
            if name == "env" and "=" in word and not word.startswith("-"):
                cmd.env.append(word)
            elif word.startswith("-") and word != "-":
                if word.split("=", 1)[0] in takes_value and "=" not in word:
                    i += 1
                elif name == "nice" and word[1:].isdigit():
                    pass
            else:
                break
            i += 1
        i += positional
        cmd.wrappers.append(name)
        if name == "xargs":
            cmd.unknown_args = True
            if i >= len(cmd.words):  # bare xargs runs echo
                cmd.words = ["echo"]
                return None
        cmd.words = cmd.words[i:]
    return None
