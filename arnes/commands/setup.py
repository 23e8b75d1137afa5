"""`arnes init` (an AGENTS.md and .arnes/ for a project) and `arnes doctor` (what arnes found here,
each missing piece with its fix)."""

from __future__ import annotations

import argparse
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from arnes.cliargs import parse_subcommand
from arnes.host.testcmd import TestCommand
from arnes.nesting import json_loads
from arnes.permissions.rules import SourcedRule
from arnes.safe import visible

# -- doctor ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    what: str
    ok: bool
    detail: str
    fix: str = ""


def run_doctor(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.cliargs import workspace_of
    from arnes.errors import EXIT_FAIL, EXIT_OK
    from arnes.runner import resolve_config

    parse_subcommand(argparse.ArgumentParser(prog="arnes doctor", description="What arnes found here."), rest, args)
    ws = workspace_of(args)
    cfg = resolve_config(args, ws)
    findings = [model_finding(cfg), *sandbox_findings(cfg.sandbox), ripgrep_finding()]
    findings.append(instructions_finding(ws, cfg.rules))
    console = Console(highlight=False, soft_wrap=True)
    # Paths, hook commands, key names and file names are the repository's: every line is shown
    # through visible(), never obeyed by the terminal.
    console.print(visible(f"workspace: {ws}"), markup=False)
    for f in findings:
        mark, style = ("ok", "green") if f.ok else ("missing", "red")
        console.print(visible(f"  {f.what}: {mark}: {f.detail}"), style=style, markup=False)
        if f.fix and not f.ok:
            console.print(visible(f"      fix: {f.fix}"), markup=False)
    line, ok = tests_line(cfg.test_command(ws))
    console.print(visible(f"  {line}"), style=None if ok else "yellow", markup=False)
    console.print(visible(f"  {profile_line(cfg)}"), markup=False)
    for line, ok in hook_lines(cfg):
        console.print(visible(f"  {line}"), style=None if ok else "yellow", markup=False)
    for line, ok in [*mcp_lines(cfg), *lsp_lines(cfg)]:
        console.print(visible(f"  {line}"), style=None if ok else "yellow", markup=False)
    for warning in cfg.warnings:
        console.print(visible(f"  warning: {warning}"), style="yellow", markup=False)
    for line, ok in skill_lines(ws, cfg.rules):
        console.print(visible(f"  {line}"), style=None if ok else "yellow", markup=False)
    for line, ok in plugin_lines(ws):
        console.print(visible(f"  {line}"), style=None if ok else "yellow", markup=False)
    for line, ok in style_lines(ws, cfg):
        console.print(visible(f"  {line}"), style=None if ok else "yellow", markup=False)
    agents_section(console, ws, cfg.trusted, cfg.rules)
    print_commands(console, ws, cfg)
    return EXIT_OK if all(f.ok for f in findings) else EXIT_FAIL


def skill_lines(ws: Path, rules: list[SourcedRule]) -> list[tuple[str, bool]]:
    """The skills found (with where from) and each one refused with its reason (extensions/skills.py)."""
    from arnes.extensions.skills import discover_skills
    from arnes.host.files import HostFiles
    from arnes.permissions.engine import RuleEngine
    from arnes.safe import one_line

    skills, refused = discover_skills(HostFiles(ws, RuleEngine(ws, rules=list(rules))))
    found = ", ".join(f"{s.name} ({s.origin})" for s in skills) or "none"
    said = [(one_line(f"skill {'shadowed' if r.shadowed else 'refused'}: {r.why}"), False) for r in refused]
    return [(one_line(f"skills: {found}"), True), *said]


def plugin_lines(ws: Path) -> list[tuple[str, bool]]:
    """Your Claude Code plugins that arnes reads (extensions/plugins.py), and what it does not."""
    from arnes.extensions.plugins import enabled_plugins
    from arnes.safe import one_line

    plugins, warnings = enabled_plugins(None, ws)
    if not plugins and not warnings:
        return []
    names = ", ".join(f"{p.key} ({p.root}{'' if p.enabled_by == 'user' else ', ' + p.enabled_by})" for p in plugins)
    names = names or "none"
    return [(one_line(f"plugins: {names}"), True), *((one_line(w), False) for w in warnings)]


def style_lines(ws: Path, cfg: object) -> list[tuple[str, bool]]:
    """The output style in use and where it was chosen; a name or a file that cannot be used, with why."""
    from arnes.config import EffectiveConfig
    from arnes.extensions.output_styles import load_styles
    from arnes.host.files import HostFiles
    from arnes.permissions.engine import RuleEngine
    from arnes.safe import one_line

    assert isinstance(cfg, EffectiveConfig)
    styles = load_styles(HostFiles(ws, RuleEngine(ws, rules=list(cfg.rules))), trusted=cfg.trusted)
    style, why = styles.choose(cfg.output_style, cfg.output_style_from)
    chosen = f"{style.name} ({style.source}; chosen in {cfg.output_style_from})" if style else "default"
    lines = [(one_line(f"output style: {chosen}; available: {', '.join(styles.names())}"), True)]
    lines += [(one_line(f"output style not used: {why}"), False)] if why else []
    lines += [
        (one_line(f"output style {'shadowed' if r.shadowed else 'refused'}: {r.why}"), False) for r in styles.refused
    ]
    return lines


def hook_lines(cfg: object) -> list[tuple[str, bool]]:
    """The hooks found in the settings (DESIGN §13): which run, and which wait for trust."""
    from arnes.config import EffectiveConfig
    from arnes.safe import one_line

    assert isinstance(cfg, EffectiveConfig)
    if not cfg.hooks:
        return []
    lines = [(f"hooks: {len(cfg.hooks)} found, {sum(not e.runs for e in cfg.hooks)} refused", True)]
    for e in cfg.hooks:
        boxed = "runs, sandboxed" + (' ("sandbox": false waits for trust)' if e.user and not e.hook.sandbox else "")
        state = (boxed if e.sandboxed else "runs, NOT sandboxed") if e.runs else "refused: untrusted folder"
        matcher = f" [{e.matcher}]" if e.matcher else ""
        lines.append((one_line(f"  {e.event}{matcher} `{e.hook.command}` ({e.source}): {state}"), e.runs))
    return lines


def mcp_lines(cfg: object) -> list[tuple[str, bool]]:
    """The MCP servers configured (DESIGN §13): which start, how confined, which wait for trust.
    Nothing is started here; `arnes mcp list` starts them and shows their tools."""
    from arnes.config import EffectiveConfig
    from arnes.safe import one_line

    assert isinstance(cfg, EffectiveConfig)
    entries = list(cfg.mcp_servers.values())
    if not entries:
        return []
    refused = sum(not e.starts for e in entries)
    lines = [(f"MCP servers: {len(entries)} found, {refused} refused (`arnes mcp list` shows their tools)", True)]
    for e in entries:
        server = e.config
        what = f"`{' '.join([server.command or '', *server.args]).strip()}`" if server.url is None else server.url
        if e.held:
            state = f"left out: {e.held}"
        elif not e.trusted:
            state = "refused: untrusted folder (`arnes trust` to start it)"
        elif server.url is not None:
            state = "starts (HTTP)"
        elif e.unconfined:
            state = "starts, NOT sandboxed"
        else:
            state = "starts, sandboxed" + (
                ' ("sandbox": false waits for trust)' if e.user and not server.sandbox else ""
            )
        lines.append((one_line(f"  {e.name} {what} ({e.source}): {state}"), e.starts))
    return lines


def lsp_lines(cfg: object) -> list[tuple[str, bool]]:
    """The plugins' language servers (arnes/lsp/): which serve which suffixes, which wait for trust.
    Nothing is started here; a session starts one when a file it serves is first used."""
    from arnes.config import EffectiveConfig
    from arnes.safe import one_line

    assert isinstance(cfg, EffectiveConfig)
    if not cfg.lsp_servers:
        return []
    lines = [(f"language servers: {len(cfg.lsp_servers)} found (started when a file they serve is used)", True)]
    for e in cfg.lsp_servers:
        what = " ".join([e.config.command, *e.config.args])
        state = "starts, sandboxed" if e.trusted else "refused: untrusted folder (`arnes trust` to start it)"
        suffixes = ", ".join(e.config.extensions)
        lines.append((one_line(f"  {e.name} `{what}` for {suffixes} ({e.source}): {state}"), e.trusted))
    return lines


def print_commands(console: Console, ws: Path, cfg: object) -> None:
    """Custom commands (DESIGN §13): the ones found, and each file that is not one, with why.

    Read as a session reads them (through HostFiles and the Read rules), so what doctor lists
    is what `/NAME` runs; a refused file does not fail doctor: the rest of arnes works."""
    from arnes.config import EffectiveConfig
    from arnes.extensions.command_turn import prepare
    from arnes.extensions.commands import load_catalog
    from arnes.host.files import HostFiles
    from arnes.permissions.engine import RuleEngine
    from arnes.safe import visible
    from arnes.ui.slash import BUILTINS

    assert isinstance(cfg, EffectiveConfig)
    files = HostFiles(ws, RuleEngine(ws, cfg.mode, list(cfg.rules)))
    catalog = load_catalog(files, BUILTINS)
    names = ", ".join(f"/{c.name} ({c.origin})" for c in catalog.commands.values()) or "none"
    console.print(f"  commands: {visible(names)}", markup=False)
    for command in catalog.commands.values():
        for note in prepare(command, "", cfg.trusted, cfg.provider).notes:
            console.print(f"      note: {visible(note)}", style="yellow", markup=False)
    for refusal in catalog.refused:
        label = "shadowed" if refusal.shadowed else "refused"
        console.print(f"      {label}: {visible(refusal.why)}", style="yellow", markup=False)
    for command in catalog.shadowed:
        why = f"{command.path}: /{command.name} is a built-in command, so the file is not run; rename it"
        console.print(f"      shadowed: {visible(why)}", style="yellow", markup=False)


def model_finding(cfg: object) -> Finding:
    from arnes.config import EffectiveConfig
    from arnes.llm.base import PROFILES, ProviderSettings, api_key

    assert isinstance(cfg, EffectiveConfig)
    profile = PROFILES[cfg.provider]
    model = cfg.model or profile.default_model
    what = f"model {model} ({cfg.provider})"
    if cfg.provider == "script":
        ok = bool(cfg.script) and Path(cfg.script or "").is_file()
        return Finding(what, ok, cfg.script or "no script", "pass --script FILE (DESIGN §6)")
    if cfg.provider == "anthropic":
        settings = ProviderSettings(provider="anthropic", model=model, base_url=cfg.base_url)
        ok = bool(api_key(settings))
        return Finding(what, ok, "ANTHROPIC_API_KEY is set" if ok else "ANTHROPIC_API_KEY is not set",
                       "export ANTHROPIC_API_KEY=... (never put it in a project file)")  # fmt: skip
    base = (cfg.base_url or profile.default_base_url or "").rstrip("/")
    if cfg.provider == "ollama":  # arnes talks to Ollama's native API; its OpenAI one lists the models
        from arnes.llm.window import server_root

        base = server_root(base) + "/v1"
    fix = (
        "run `ollama serve` and `ollama pull qwen2.5-coder:7b`"
        if cfg.provider == "ollama"
        else "start the server, or pass --base-url URL (an OpenAI-compatible /v1 endpoint)"
    )
    try:
        with urllib.request.urlopen(f"{base}/models", timeout=3) as reply:
            listed = [m.get("id", "") for m in json_loads(reply.read() or b"{}").get("data", [])]
    except (OSError, urllib.error.URLError, ValueError) as exc:
        return Finding(what, False, f"no server answers at {base} ({getattr(exc, 'reason', exc)})", fix)
    detail = f"server at {base} answers"
    if listed and model not in listed:
        return Finding(what, False, f"{detail}, but it has no model {model!r} (it has: {', '.join(listed[:5])})",
                       f"pass --model NAME, or `ollama pull {model}`")  # fmt: skip
    from arnes.llm.window import probe_window

    found = probe_window(cfg.provider, base, model, profile.default_context_window)
    window = f"; context window {cfg.context_window}" if cfg.context_window else ""
    window = window or (f"; context window {found.tokens} ({found.source})" if found else "")
    return Finding(what, True, detail + window)


def sandbox_findings(mode: str) -> list[Finding]:
    from arnes.sandbox.bubblewrap import Bubblewrap
    from arnes.sandbox.landlock import LandlockSandbox

    bwrap, landlock = Bubblewrap.unavailable(), LandlockSandbox.unavailable()
    if mode == "off":
        return [Finding("sandbox", False, "off by setting: shell commands run unconfined and ask first",
                        "use --sandbox auto (bubblewrap)")]  # fmt: skip
    if bwrap is None and mode in ("auto", "bubblewrap"):
        return [Finding("sandbox", True, "bubblewrap: writes only in the workspace, no network, denied files hidden")]
    if landlock is None and mode in ("auto", "landlock"):
        detail = f"landlock only (bubblewrap: {bwrap}): writes confined, reads and network are not, so commands ask"
        return [Finding("sandbox", False, detail, "install bubblewrap / allow unprivileged user namespaces")]
    return [Finding("sandbox", False, f"none works here (bubblewrap: {bwrap}; landlock: {landlock})",
                    "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or a kernel "
                    "with Landlock")]  # fmt: skip


def ripgrep_finding() -> Finding:
    from arnes.host.ripgrep import ripgrep
    from arnes.tools.base import ToolError

    try:
        rg = ripgrep()
        version = subprocess.run([rg, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (ToolError, OSError, subprocess.TimeoutExpired) as exc:
        return Finding("ripgrep", False, str(exc), "reinstall arnes (`pip install .`), which brings ripgrep")
    return Finding("ripgrep", True, version.stdout.splitlines()[0] if version.stdout else rg)


def profile_line(cfg: object) -> str:
    """How arnes adapts to this model (llm/profiles.py): what a user sees before a run surprises them."""
    from arnes.config import EffectiveConfig
    from arnes.llm.base import PROFILES
    from arnes.llm.profiles import pieces_of, profile_for

    assert isinstance(cfg, EffectiveConfig)
    model = cfg.model or PROFILES[cfg.provider].default_model
    p = profile_for(model, cfg.steering, cfg.edit_format)  # type: ignore[arg-type]  # checked by the settings
    names = pieces_of(p.steering)
    pieces = ", ".join(names) or "none"
    hidden = f"; not offered: {', '.join(p.not_offered)}" if p.not_offered else ""
    draws = f"; {p.draws_per_turn} fresh draws at temperature {p.draw_temperature}" if p.draws_per_turn else ""
    return f"profile: {p.name} (steering {p.steering}: {pieces}; edit format {p.edit_format}{hidden}{draws})"


def tests_line(found: TestCommand | None) -> tuple[str, bool]:
    """The command the self-check and `--verify auto` run, and where it came from: a wrong guess is
    seen here before a model is told to fix code over it. None found is no fault of the setup."""
    if found is None:
        return "tests: none found (the self-check runs nothing; set verify.command in settings to name one)", False
    return f"tests: {found.command} ({found.why})", True


def instructions_finding(ws: Path, rules: list[SourcedRule]) -> Finding:
    """The instruction files a session would read here (agent/instructions.py), and what it leaves out."""
    from arnes.agent.instructions import collect_all
    from arnes.host.files import HostFiles
    from arnes.permissions.engine import RuleEngine

    notes: list[str] = []
    found = collect_all(HostFiles(ws, RuleEngine(ws, rules=list(rules))), notes)
    shown = [s.shown for s in found.sections]
    project = [name for name in shown if not name.startswith(("~/", "/"))]
    yours = [name for name in shown if name not in project]
    detail = ", ".join(project) or "no AGENTS.md"
    detail += f"; yours: {', '.join(yours)}" if yours else ""
    scoped = [f"{rule.shown} ({', '.join(rule.globs)})" for rule in found.scoped]
    detail += f"; rules loaded with matching files: {', '.join(scoped)}" if scoped else ""
    detail += "".join(f"; {note}" for note in notes)
    return Finding("project instructions", bool(project), detail, "run `arnes init` to write one")


def agents_section(console: Console, ws: Path, trusted: bool, rules: list[SourcedRule]) -> None:
    """Agent definitions found (what each may do) and the files refused, each with why."""
    from arnes.extensions.agents import load_catalog
    from arnes.host.files import HostFiles
    from arnes.permissions.engine import RuleEngine
    from arnes.safe import one_line

    catalog = load_catalog(HostFiles(ws, RuleEngine(ws, rules=list(rules))), trusted=trusted)
    if not catalog.agents and not catalog.refused:
        where = ".arnes/agents/, .claude/agents/, ~/.config/arnes/agents/"
        console.print(f"  agent definitions: none ({where})", markup=False)
        return
    console.print("  agent definitions:", markup=False)
    for a in catalog.agents.values():
        tools = ", ".join(a.tools) if a.tools is not None else "the parent's"
        mode = a.mode or "the parent's"
        what = f"tools: {tools}; mode: {mode}; model: {a.model or 'as any sub-agent'}"
        shown = f"    {a.name} ({a.origin}, {a.path}): {what}"  # the tools and the model are the file's words
        console.print(one_line(shown), style="green", markup=False)
        for note in a.notes:
            console.print(f"        ignored: {one_line(note)}", style="yellow", markup=False)
    for refusal in catalog.refused:
        label = "shadowed" if refusal.shadowed else "refused"
        console.print(f"    {label}: {one_line(refusal.why)}", style="red", markup=False)


# -- init --------------------------------------------------------------------------------------


def run_init(args: argparse.Namespace, rest: list[str]) -> int:
    from arnes.cliargs import workspace_of
    from arnes.dotdir import ensure_arnes_dir
    from arnes.errors import EXIT_OK, EXIT_USAGE
    from arnes.host.atomic import atomic_write
    from arnes.runner import resolve_config

    parser = argparse.ArgumentParser(prog="arnes init", description="Write AGENTS.md and .arnes/ for this project.")
    parser.add_argument("--force", action="store_true", help="overwrite an existing AGENTS.md")
    opts = parse_subcommand(parser, rest, args)
    ws = workspace_of(args)
    ensure_arnes_dir(ws)
    target = ws / "AGENTS.md"
    if (target.exists() or target.is_symlink()) and not opts.force:
        print(f"arnes init: {target} exists; kept it (--force writes a new one). .arnes/ is ready.")
        return EXIT_OK
    if target.is_symlink():
        print(f"arnes init: {target} is a link; not writing through it")
        return EXIT_USAGE
    found = resolve_config(args, ws, ask=False).test_command(ws)
    atomic_write(target, agents_md(ws, found).encode("utf-8"))
    print(f"arnes init: wrote {target} (from the project's files: edit it, arnes reads it every run) and .arnes/")
    tests = f"{found.command} ({found.why})" if found else "none found (set verify.command in settings)"
    print(visible(f"arnes init: tests: {tests}"))
    return EXIT_OK


KINDS = (
    ("pyproject.toml", "Python"), ("setup.py", "Python"), ("package.json", "JavaScript/TypeScript (npm)"),
    ("Cargo.toml", "Rust (cargo)"), ("go.mod", "Go"), ("pom.xml", "Java (Maven)"), ("Makefile", "make"),
)  # fmt: skip


def agents_md(ws: Path, test: TestCommand | None) -> str:
    """AGENTS.md from what the project's files say: its kind, its test command, its layout."""
    kinds = sorted({kind for name, kind in KINDS if (ws / name).is_file()})
    if not kinds and any(ws.glob("*.py")):
        kinds = ["Python"]
    folders = sorted(p.name for p in ws.iterdir() if p.is_dir() and not p.name.startswith(".") and not p.is_symlink())
    summary = _readme_summary(ws)
    lines = [f"# {ws.name} — notes for coding agents", ""]
    if summary:
        lines += [summary, ""]
    lines += ["## Project", f"- Kind: {', '.join(kinds) or 'not detected (say what it is here)'}"]
    if folders:
        lines.append("- Layout: " + ", ".join(f"`{name}/`" for name in folders[:12]))
    lines += [
        "",
        "## Run and check",
        f"- Tests: `{test.command}` ({test.why})" if test else "- Tests: (none detected: write the command here)",
    ]
    lines += [
        "",
        "## Rules",
        "- Read a file before changing it; keep changes small and focused on the task.",
        "- Run the tests after a change; the task is done when they pass.",
        "",
    ]
    return "\n".join(lines)


def _readme_summary(ws: Path) -> str:
    for name in ("README.md", "README.rst", "README.txt", "README"):
        path = ws / name
        if path.is_file() and not path.is_symlink():
            paragraphs = [p.strip() for p in path.read_text(encoding="utf-8", errors="replace").split("\n\n")]
            for paragraph in paragraphs:
                if paragraph and not paragraph.startswith(("#", "[", "!", "<", "=")):
                    return " ".join(paragraph.split())[:400]
    return ""
