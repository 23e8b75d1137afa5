"""Split and classify shell commands on a real parser (tree-sitter-bash), never on regexes.

A command line becomes a list of simple commands (through `&& || ; | &`, newlines, subshells,
brace groups, `$(...)`, backticks, `<(...)`, here-docs, `bash -c '...'` and `eval '...'` with a
literal argument), each with its wrappers (`timeout`, `nice`, `env X=1`, `nohup`, `xargs`, ...)
looked through, plus the files its redirections write. What the parser cannot see into, and
every construct where tree-sitter and bash are known to read a line differently, is marked
opaque, and an opaque command always asks (tests/test_shell_corpus.py holds it against bash).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from arnes.permissions.programs import inner_programs
from arnes.permissions.shellwords import (
    heredoc_delimiter,
    join_continuations,
    literal,
    quoted_heredoc,
    unquoted_glob,
    words_of,
)
from arnes.permissions.simplecommand import SimpleCommand
from arnes.permissions.wrappers import unwrap

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
# Variables that make any bash started later run code: assigned anywhere in a command, it is opaque.
CODE_ENV = re.compile(r"^(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|BASH_FUNC_\S+)\+?=")
_CODE_ENV_WORD = re.compile(r"(^|\s)(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|BASH_FUNC_\S+)\+?=|\s-\w*n\b")
_CODE_ENV_REASON = "sets a variable that makes a later bash run code (BASH_ENV, ENV, PS4, ...) or a name reference"
# Words tree-sitter takes as a command name where bash reads a reserved word (`time { ...; }`).
RESERVED = frozenset("{ } ( ) [[ ]] ! then else elif fi do done esac in function coproc select".split())
_NAMED_FD = re.compile(r"^\{[A-Za-z_][A-Za-z0-9_]*\}$")
_REDIRECTS = ("file_redirect", "heredoc_redirect", "herestring_redirect")


@dataclass
class ShellAnalysis:
    commands: list[SimpleCommand] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # redirect and tee targets, as written
    reads: list[str] = field(default_factory=list)  # input redirect sources (`< file`), as written
    # unquoted pathname patterns of any command's words and of `for ... in` lists, as written
    # ("$?" when computed): the shell lists the folder each stays in (`echo /srv/*`)
    patterns: list[str] = field(default_factory=list)
    changes_directory: bool = False  # a cd/pushd/popd: relative paths after it are not the workspace's
    directories: list[str | None] = field(default_factory=list)  # where each cd goes (`~` home, None unknown)
    opaque: list[str] = field(default_factory=list)  # why parts could not be looked into
    error: str | None = None
    # The whole line is one command of plain words: no list, pipeline, `&`, negation, group,
    # redirection, assignment or comment around it (what runs it may run it another way).
    simple: bool = False


@cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


# The longest command line that is read. Reading costs more than linear time in some shapes (a
# 200,000-character one took minutes of CPU before its deny); a script that long belongs in a file.
MOST_COMMAND_CHARS = 50_000


def too_long(command: str) -> str:
    return (
        f"the command is {len(command):,} characters long; commands over {MOST_COMMAND_CHARS:,} are not read: "
        "write the script to a file (Write) and run the file"
    )


def analyse(command: str) -> ShellAnalysis:
    if len(command) > MOST_COMMAND_CHARS:
        return ShellAnalysis(error=too_long(command))
    result = ShellAnalysis()
    try:
        _analyse_into(command, result, nested=False, depth=0)
    except RecursionError:  # a thousand `&&` or nested `$(` deep: the walk is recursive
        return ShellAnalysis(error="the command is nested too deeply to be read")
    return result


def _analyse_into(source: str, result: ShellAnalysis, *, nested: bool, depth: int) -> None:
    if depth > 4:
        result.opaque.append("shell nested too deeply")
        return
    tree = _parser().parse(source.encode())
    joined = join_continuations(source, tree.root_node)
    if joined != source:  # bash joins `\<newline>` before it splits words; so must the parser
        tree = _parser().parse(joined.encode())
    if tree.root_node.has_error:
        result.error = "the command could not be parsed"
        return
    if depth == 0:
        result.simple = _simple(tree.root_node)
    _Walker(result, nested, depth, joined.encode()).visit(tree.root_node)


_PLAIN_WORDS = frozenset({"command_name", "word", "string", "raw_string", "ansi_c_string", "concatenation", "number"})


def _simple(root: Node) -> bool:
    """One command whose children are words only (what is in them is the walker's to read)."""
    named = root.named_children
    if len(named) != 1 or named[0].type != "command" or any(c.type == "&" for c in root.children):
        return False
    return all(c.type in _PLAIN_WORDS for c in named[0].named_children)


def _text(node: Node) -> str:
    return (node.text or b"").decode(errors="replace")


class _Walker:
    def __init__(self, result: ShellAnalysis, nested: bool, depth: int, source: bytes):
        self.result, self.nested, self.depth, self.source = result, nested, depth, source

    def visit(self, node: Node, nested: bool | None = None) -> None:
        inner = self.nested if nested is None else nested
        kind = node.type
        if kind == "word" and b"\n" in (node.text or b""):
            # tree-sitter glues a newline to a word that follows with an escape (`a<newline>\rm`);
            # bash ends the command there
            self.result.opaque.append("a line break inside a word, which bash reads as the end of a command")
        if kind == "command":
            self._command(node, inner)
        elif kind == "redirected_statement":
            self._redirected(node, inner)
        elif kind in ("command_substitution", "process_substitution"):
            for child in node.named_children:
                self.visit(child, True)
        elif kind == "file_redirect":
            self._redirect(node, inner)
        elif kind == "heredoc_redirect":
            self._heredoc(node, inner)
        elif kind == "test_command" and not _text(node).startswith("[["):
            self._add(SimpleCommand(["[", *_test_words(node), "]"], nested=inner))
            for child in node.named_children:
                self.visit(child, inner)
        elif kind == "for_statement":
            for value in node.children_by_field_name("value"):
                self._patterns(value, words_of(value))
            for child in node.named_children:
                self.visit(child, inner)
        elif kind == "function_definition":
            self.result.opaque.append("defines a shell function")
            for child in node.named_children:  # its body is still looked into for denied commands
                self.visit(child, True)
        elif _evaluates(node):
            # export/declare, bare assignments, [[ ]] and (( )) evaluate array subscripts and change
            # what later commands do: never read-only, never allowed by a rule.
            text = _text(node)
            word = text.split(maxsplit=1)[0] if kind == "declaration_command" else f"({kind})"
            if kind in ("variable_assignment", "declaration_command") and _CODE_ENV_WORD.search(text):
                self.result.opaque.append(_CODE_ENV_REASON)
            self.result.commands.append(SimpleCommand([word], nested=inner))
            reason = _runs_code(kind, text)
            if reason:
                self.result.opaque.append(f"{word} {reason}")
            for child in node.named_children:
                self.visit(child, inner)
        else:
            for child in node.named_children:
                self.visit(child, inner)

    def _redirected(self, node: Node, nested: bool) -> None:
        """`git >/dev/null push`: tree-sitter hangs `push` on the redirection; bash passes it to git."""
        body = node.child_by_field_name("body")
        redirects = [c for c in node.named_children if c.type in _REDIRECTS]
        extra = [w for r in redirects if r.type == "file_redirect" for w in _extra_words(r)]
        if body is not None and body.type == "command":
            self._command(body, nested, extra)
        elif body is not None:
            if extra:
                self.result.opaque.append("words after a redirection that bash and the parser read differently")
            self.visit(body, nested)
        for child in redirects:
            self.visit(child, nested)

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
        for child in node.named_children:
            self.visit(child, nested)

    def _heredoc(self, node: Node, nested: bool) -> None:
        """Only delimiters both read alike are looked into; an unquoted body is expanded by bash,
        and tree-sitter does not parse backticks in it."""
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        end = next((c for c in node.children if c.type == "heredoc_end"), None)
        delimiter = heredoc_delimiter(_text(start)) if start is not None else None
        if delimiter is None or end is None or _text(end).strip("\t") != delimiter:
            self.result.opaque.append("a here-document whose end bash and the parser may read differently")
        quoted = quoted_heredoc(node)
        for child in node.named_children:
            if child.type == "heredoc_body":
                if quoted:
                    continue
                if "`" in _text(child):
                    self.result.opaque.append("backticks in a here-document")
                if any(c.type == "<<-" for c in node.children) and end is not None:
                    self._dash_body(child, end, nested)
            self.visit(child, nested)

    def _dash_body(self, body: Node, end: Node, nested: bool) -> None:
        """tree-sitter does not look into a `<<-` body whose lines start with tabs; bash strips
        the tabs and expands the rest: the stripped body is read again as a plain here-document."""
        start = self.source.rfind(b"\n", 0, body.start_byte) + 1
        text = self.source[start : end.start_byte].decode(errors="replace")
        stripped = "\n".join(line.lstrip("\t") for line in text.split("\n"))
        if "$" not in stripped:
            return
        delimiter = "ARNES_END"
        while delimiter in stripped:
            delimiter += "_"
        _analyse_into(f"cat <<{delimiter}\n{stripped}\n{delimiter}\n", self.result, nested=nested, depth=self.depth + 1)

    def _command(self, node: Node, nested: bool, extra: list[str | None] | None = None) -> None:
        env: list[str] = []
        words: list[str | None] = []
        children = node.named_children
        for n, child in enumerate(children):
            following = children[n + 1] if n + 1 < len(children) else node.next_named_sibling
            if child.type == "variable_assignment":
                env.append(_text(child))
                for part in child.named_children:  # its value, not the assignment as a statement
                    self.visit(part, nested)
            elif child.type in _REDIRECTS:
                if child.type == "file_redirect":
                    words += _extra_words(child)
                self.visit(child, nested)
            elif (
                following is not None
                and following.type in _REDIRECTS
                and following.start_byte == child.end_byte
                and _NAMED_FD.match(_text(child))
            ):
                continue  # `{fd}>file`: bash opens a descriptor and names it; not a word
            else:
                expanded = words_of(child)
                words += [None] if expanded is None else expanded
                self._patterns(child, expanded)
                self.visit(child, nested)
        words += extra or []
        if not words:
            return
        name_node = node.child_by_field_name("name")
        raw_name = literal(name_node) if name_node is not None else words[0]
        if words[0] is None or raw_name is None:
            self.result.opaque.append("the command name is computed at run time")
            return
        if set(raw_name) & set("*?[{") or set(words[0]) & set("*?["):
            self.result.opaque.append("the command name is a pattern the shell expands")
            return
        if raw_name in RESERVED or (raw_name == "time" and any(w in RESERVED for w in words[1:3])):
            self.result.opaque.append(f"{raw_name!r} where bash reads a reserved word")
        self._add(SimpleCommand([w if w is not None else "$?" for w in words], env=env, nested=nested))

    def _patterns(self, word: Node, expanded: list[str] | None) -> None:
        if unquoted_glob(word):
            self.result.patterns += ["$?"] if expanded is None else expanded

    def _add(self, cmd: SimpleCommand) -> None:
        problem = unwrap(cmd)
        if problem:
            self.result.opaque.append(problem)
        if any(CODE_ENV.match(v) for v in cmd.env):
            self.result.opaque.append(_CODE_ENV_REASON)
        if not cmd.words:  # a bare `env` or `nice`: it still runs (and `env` prints the environment)
            if cmd.wrappers and not problem:
                self.result.commands.append(cmd)
            return
        name = cmd.words[0]
        if name in CWD_CHANGERS:
            self.result.changes_directory = True
            self.result.directories.append(cd_target(cmd.words))
        if "{}" in name or name == "$?":
            self.result.opaque.append("runs a program whose name is only known when it runs")
        if name in EVALUATES_ARGUMENTS or (
            name in ("printf", "test", "[") and any(w.startswith("-v") for w in cmd.words)
        ):
            self.result.opaque.append(f"{name} can evaluate its arguments as code")
        inner = inner_programs(cmd.words, cmd.env)
        self.result.opaque += inner.opaque
        self.result.writes += inner.writes
        self.result.reads += inner.reads
        for words in inner.commands:
            self._add(SimpleCommand(list(words), nested=True))
        for script in inner.scripts:
            _analyse_into(script, self.result, nested=True, depth=self.depth + 1)
        if name in SHELLS:
            self._shell(cmd)
        elif name == "eval":
            script = " ".join(cmd.words[1:])
            if "$?" in script:
                self.result.opaque.append("eval of a computed string")
            else:
                _analyse_into(script, self.result, nested=True, depth=self.depth + 1)
            cmd.nested = True
        elif name in ("source", "."):
            self.result.opaque.append(f"{name} runs a script nobody can read here")
        elif name in ("su", "sg", "login", "machinectl"):
            self.result.opaque.append(f"{name} runs a shell as another user or group")
        elif name == "tee":
            self.result.writes += [w for w in cmd.words[1:] if not w.startswith("-") and w != "/dev/null"]
        self.result.commands.append(cmd)

    def _shell(self, cmd: SimpleCommand) -> None:
        name = cmd.words[0]
        script = shell_script(cmd.words)
        if script is None:
            self.result.opaque.append(f"{name} runs a script from standard input or a file")
        elif "$?" in script:
            self.result.opaque.append(f"{name} -c with a script nobody can read here")
        else:
            _analyse_into(script, self.result, nested=True, depth=self.depth + 1)
        cmd.nested = True


def cd_target(words: list[str]) -> str | None:
    """Where `cd` goes: a bare `cd` to `~` ($HOME); `cd -` ($OLDPWD), pushd/popd and computed
    folders are unknown here (None)."""
    if words[0] != "cd":
        return None
    args = [w for w in words[1:] if not (w.startswith("-") and len(w) > 1 and set(w[1:]) <= set("LPe@"))]
    args = args[1:] if args[:1] == ["--"] else args
    if not args:
        return "~"
    if len(args) > 1 or args[0] in ("-", "$?") or "$?" in args[0]:
        return None
    return args[0]


def shell_script(words: list[str]) -> str | None:
    """The script of `bash [options] -c SCRIPT` (`-xc`, `-o x -c`, `-c -- SCRIPT`), or None when
    the shell reads its script from a file or from standard input."""
    i, command_mode = 1, False
    while i < len(words):
        word = words[i]
        if word in ("--", "-"):
            i += 1
            break
        if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if word.startswith("--"):
            i += 1
            continue
        if word[:1] in "-+" and len(word) > 1:
            command_mode = command_mode or (word[0] == "-" and "c" in word[1:])
            i += 2 if word[-1] in "oO" else 1
            continue
        break
    return words[i] if command_mode and i < len(words) else None


def _extra_words(redirect: Node) -> list[str | None]:
    """Words tree-sitter put after a redirection's target: bash's arguments of the command."""
    targets = [c for c in redirect.named_children if c.type != "file_descriptor"]
    out: list[str | None] = []
    for node in targets[1:]:
        expanded = words_of(node)
        out += [None] if expanded is None else expanded
    return out


def _test_words(node: Node) -> list[str]:
    words: list[str] = []
    for child in node.children:
        if child.type in ("[", "]"):
            continue
        if child.type in ("binary_expression", "unary_expression", "parenthesized_expression", "negated_expression"):
            words += _test_words(child)
        elif child.is_named:
            expanded = words_of(child)
            words += ["$?"] if expanded is None else expanded
        else:
            words.append(_text(child))
    return words


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
    while_statement case_statement case_item comment regex extglob_pattern brace_expression
    binary_expression unary_expression parenthesized_expression test_operator""".split()
)  # (expressions: the `[[ ]]` or `(( ))` around them is judged as a whole)
_SIMPLE_EXPANSION = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")
_ARITHMETIC = ("arithmetic_expansion", "c_style_for_statement", "compound_statement")


def _evaluates(node: Node) -> bool:
    if node.type == "expansion":
        return not _SIMPLE_EXPANSION.match(_text(node))
    if node.type == "compound_statement":
        return _text(node).lstrip().startswith("((")
    return node.type not in STRUCTURAL


def _runs_code(kind: str, text: str) -> str | None:
    """Why a construct that evaluates text may run code hidden in a value, or None."""
    if any(mark in text for mark in ("$(", "`", "@P")):
        return "evaluates text as code"
    if kind in _ARITHMETIC or kind == "test_command":
        body = text.lstrip("$([").rstrip(")]")
        # a variable in arithmetic is evaluated as an expression: `a[$(cmd)]` in its value runs
        if kind != "test_command" and re.search(r"[A-Za-z_$\[]", body):
            return "evaluates variables as arithmetic (their subscripts run code)"
        if kind == "test_command" and re.search(r"-(eq|ne|lt|le|gt|ge)\b|-v\b|\[", body):
            return "evaluates variables as arithmetic (their subscripts run code)"
        return None
    if kind == "expansion":
        if text.startswith("${!") or re.match(r"^\$\{#?\w+(\[[^]]*\])?:[^-=?+]", text) or "[" in text:
            return "expands a name or an offset bash evaluates (subscripts run code)"
        return None
    if "[" in text:
        return "evaluates a subscript as code"
    return None
