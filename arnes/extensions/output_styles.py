"""Output styles, as Claude Code has them: how the main agent talks, chosen by `outputStyle`.

A style is a Markdown file (front matter `name`, `description`, `keep-coding-instructions`) whose
text goes at the end of the system prompt. Without `keep-coding-instructions: true` a file's style
drops the system prompt's coding lines (find before you change, call Write or Edit, ...) and keeps
the rest: who arnes is, paths, denials and "tool output is data" (agent/prompt.py). The built-in
ones keep the coding lines: they change how arnes explains its work, not what work it does.

Where they come from (extensions/locations.py): your own `~/.config/arnes/output-styles/` and
`~/.claude/output-styles/`, then the project's `.arnes/output-styles/` and `.claude/output-styles/`.
A project's style writes arnes's own instructions, so it is used only in a folder you trust, and
its files are part of the trust fingerprint (permissions/trust.py); a project's `outputStyle` is a
grant like any other project setting (permissions/grants.py). Sub-agents do not get the style:
it is how the agent talks to you.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from arnes.errors import ConfigError
from arnes.extensions.locations import Found, Refusal, discover, linked, shadowed
from arnes.host.files import HostFiles

DEFAULT = "default"


@dataclass(frozen=True)
class OutputStyle:
    name: str
    description: str
    text: str
    keep_coding: bool  # keep the system prompt's coding lines
    source: str  # "built in", or the file it came from

    def section(self) -> str:
        """The style's part of the system prompt, after arnes's own."""
        return f"Output style: {self.name}\n{self.text.strip()}"


BUILT_IN = {
    style.name.lower(): style
    for style in (
        OutputStyle(
            "Explanatory",
            "Explains the choices it makes while it works",
            "While you work, explain what you find and why you choose what you do: before or after a change, add a "
            "short 'Insight' (two or three points) on the codebase's patterns or the trade-off you made. Keep "
            "insights specific to this code, not general advice.",
            True,
            "built in",
        ),
        OutputStyle(
            "Learning",
            "Leaves small, meaningful pieces for you to write, and explains",
            "The user wants to learn by doing. Do the routine work yourself, but where a small piece of logic "
            "teaches something (a condition, a loop, a choice between designs), leave it for the user: write a "
            "`TODO(human)` comment where it goes, say what it should do and why, and stop for them. Add short "
            "'Insight' notes on the patterns you use.",
            True,
            "built in",
        ),
        OutputStyle(
            "Concise",
            "Leads with the result; short answers, no narration",
            "Lead with the result. Skip preamble and narration of your steps; keep answers short unless the user "
            "asks for detail. Do the work as thoroughly as ever: only the talk is shorter.",
            True,
            "built in",
        ),
        OutputStyle(
            "Proactive",
            "Acts on reasonable assumptions instead of stopping to ask",
            "Act rather than ask: where a routine decision has a reasonable default, take it, say in one line which "
            "you took, and go on. Stop to ask only when a choice is costly to undo or the task is unclear.",
            True,
            "built in",
        ),
    )
}


@dataclass
class Styles:
    """The styles that can be chosen, by lower-case name, and what was refused on the way."""

    styles: dict[str, OutputStyle] = field(default_factory=dict)
    refused: list[Refusal] = field(default_factory=list)
    waiting: dict[str, Path] = field(default_factory=dict)  # a project's styles in an untrusted folder

    def names(self) -> list[str]:
        return [DEFAULT, *(style.name for style in self.styles.values())]

    def choose(self, name: str | None, chosen_in: str) -> tuple[OutputStyle | None, str | None]:
        """(the style `name` selects, a warning); None for the default or a name that cannot be used."""
        if name is None or name.strip().lower() == DEFAULT:
            return None, None
        key = name.strip().lower()
        if key in self.styles:
            return self.styles[key], None
        if key in self.waiting:
            return None, (
                f"outputStyle {name!r} ({chosen_in}) is the project's {self.waiting[key]}: a project's style is "
                "used only in a folder you trust (`arnes trust`, or --trust for one run); the default style is used"
            )
        return None, (
            f"outputStyle {name!r} ({chosen_in}) is no style arnes knows; choose one of {', '.join(self.names())} "
            "or add ~/.claude/output-styles/NAME.md; the default style is used"
        )


def load_styles(files: HostFiles, env: dict[str, str] | None = None, *, trusted: bool) -> Styles:
    """The built-in styles, then every file's (the first file of a name wins it, as for agents); a
    bad file is refused with why. A file's style of a built-in's name replaces the built-in."""
    found, refused = discover("output-styles", files, env)
    styles = Styles(refused=[*refused, *linked("output-styles", files)])
    from_files: dict[str, OutputStyle] = {}
    for item in found:
        try:
            style = _style(item)
        except ConfigError as exc:
            styles.refused.append(Refusal(item.document.path, str(exc)))
            continue
        key = style.name.lower()
        if key in from_files:
            styles.refused.append(shadowed(item.document.path, style.name, from_files[key].source))
        elif key in styles.waiting:
            styles.refused.append(shadowed(item.document.path, style.name, styles.waiting[key]))
        elif item.origin == "project" and not trusted:
            styles.waiting[key] = item.document.path.relative_to(files.root)
        else:
            from_files[key] = style
    styles.styles = {**BUILT_IN, **from_files}
    return styles


def _style(item: Found) -> OutputStyle:
    doc, path = item.document, item.document.path
    name = doc.name("name") or item.name
    if name.lower() == DEFAULT:
        raise ConfigError(f"{path}: {DEFAULT!r} is arnes's own style and cannot be redefined; rename the file")
    keep = doc.meta.get("keep-coding-instructions", False)
    if not isinstance(keep, bool):
        raise ConfigError(f"{path}: keep-coding-instructions must be true or false")
    if not doc.body.strip():
        raise ConfigError(f"{path}: the style has no text after its front matter")
    return OutputStyle(name, doc.text("description") or "", doc.body, keep, str(path))
