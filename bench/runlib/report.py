"""The results block bench/run.py writes into bench/README.md."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from runlib.harness import median, ms
from runlib.startup import Startup
from runlib.steps import ALL_AGENTS, LABELS, StepResult, Variant


def report(
    args: argparse.Namespace,
    machine: dict[str, str],
    startup: Startup | None,
    steps: dict[str, StepResult] | None,
    variant: Variant,
    versions: dict[str, str],
) -> str:
    lines: list[str] = []
    add = lines.append
    cmd = "python bench/run.py" + (" " + " ".join(args.argv) if args.argv else "")
    add(f"Measured {machine['date']} with `{cmd}` (project venv active, from the repository root).")
    add("")
    add("| machine | |")
    add("| --- | --- |")
    for k in ("cpu", "cores", "memory", "os", "python", "arnes", "arnes's SDKs"):
        add(f"| {k} | {machine[k]} |")
    if versions:
        add(
            f"| mini-swe-agent | {versions.get('mini-swe-agent', '?')} (litellm {versions.get('litellm', '?')}, "
            f"openai {versions.get('openai', '?')}; in bench/.venv-mini) |"
        )
    add("")
    if startup:
        add("### Start-up")
        add("")
        add("| command | median ms | min ms | runs |")
        add("| --- | ---: | ---: | ---: |")
        for label, times in startup.rows:
            add(f"| `{label}` | {ms(median(times))} | {ms(min(times))} | {len(times)} |")
        base = median(startup.rows[0][1])
        help_ = median(startup.rows[1][1])
        add("")
        add(f"`arnes --help` costs {ms(help_ - base)} ms over a bare interpreter (medians).")
        add("")
        it = ", ".join(f"{h}: {'**yes**' if v else 'no'}" for h, v in startup.importtime_heavy.items())
        sm = ", ".join(f"{h}: {'**yes**' if v else 'no'}" for h, v in startup.sys_modules_heavy.items())
        ok = not any(
            startup.importtime_heavy.get(h) or startup.sys_modules_heavy.get(h) for h in ("anthropic", "openai")
        )
        add(
            f"Imported by `arnes --help`: `python -X importtime` says {it}; `sys.modules` after "
            f"`arnes.cli.main(['--help'])` says {sm}. "
            + ("**OK: neither anthropic nor openai is imported.**" if ok else "**FAIL: a provider SDK is imported.**")
        )
        add("")
        tops = ", ".join(f"{name} {us / 1000:.1f} ms" for name, us in startup.top_imports)
        add(f"Largest top-level imports (cumulative, from `-X importtime`): {tops}.")
        add("")
    if steps:
        st = next(iter(steps.values()))
        n_full, n_base = st.steps + args.base_n, args.base_n
        cols = [r for r in (steps.get(k) for k in ALL_AGENTS) if r is not None]
        arnes_r = steps.get("arnes")
        minis = [r for r in cols if r.agent != "arnes"]  # every other column, compared with arnes
        add(f"### Per step: {n_full} scripted steps (`{variant.name}`), arnes vs mini-swe-agent")
        add("")
        add(f"Medians of {len(st.full)} repetitions; per step = (N={n_full} - N={n_base}) / {st.steps}.")
        add("")
        head = [LABELS[r.agent] for r in cols] + ([f"arnes / {LABELS[r.agent]}" for r in minis] if arnes_r else [])
        add("| | " + " | ".join(head) + " |")
        add("| --- |" + " ---: |" * len(head))

        def row(label: str, f: Callable[[StepResult], float], unit: Callable[[float], str]) -> None:
            cells = [unit(f(r)) for r in cols]
            if arnes_r:
                cells += [f"{f(arnes_r) / f(r):.2f}" if f(r) > 0 and f(arnes_r) > 0 else "n/a" for r in minis]
            add(f"| {label} | " + " | ".join(cells) + " |")

        def sec(x: float) -> str:
            return f"{x:.2f} s"

        def msu(x: float) -> str:
            return f"{x * 1000:.2f} ms"

        row(f"wall, whole run at N={n_base}", lambda r: median([s.wall for s in r.base]), sec)
        row(f"wall, whole run at N={n_full}", lambda r: median([s.wall for s in r.full]), sec)
        row("**wall per step**", lambda r: r.per_step("wall"), msu)
        row("agent's own loop clock per step (less noisy)", lambda r: r.per_step("loop"), msu)
        row("agent CPU per step (its process tree)", lambda r: r.per_step("cpu"), msu)
        row("fake-server CPU per step (shared harness)", lambda r: r.per_step("server_cpu"), msu)
        add("")
        m = steps.get("mini")
        if arnes_r and m:
            for what, attr in (("Wall per step", "wall"), ("Loop-clock per step", "loop")):
                pa, pm = arnes_r.per_step(attr), m.per_step(attr)
                if pa <= 0 or pm <= 0:
                    add(
                        f"{what}: inconclusive (a difference came out ≤ 0: start-up noise exceeds the signal; "
                        "use more --reps or --steps)."
                    )
                else:
                    ratio = pa / pm
                    verdict = "meets" if ratio < 0.5 else "does NOT meet"
                    add(
                        f"{what}, arnes / mini-swe-agent = **{ratio:.2f}**: {verdict} the project's goal of "
                        "well under half (< 0.5)."
                    )
                add("")
        add("<details><summary>raw wall times (s)</summary>")
        add("")
        for r in steps.values():
            add(f"- {r.agent} N={n_base}: " + ", ".join(f"{s.wall:.3f}" for s in r.base))
            add(f"- {r.agent} N={n_full}: " + ", ".join(f"{s.wall:.3f}" for s in r.full))
        add("")
        add("</details>")
    return "\n".join(lines)
