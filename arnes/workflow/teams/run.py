"""Run a team: waves of nodes (parallel branches in their own copies of the workspace), edges
taken by verdict with round limits, every node's writes detected and attributed."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from arnes.agent.delegation import child_for
from arnes.agent.events import Event, ToolResultEvent
from arnes.agent.loop import Agent, raise_for
from arnes.errors import ConfigError
from arnes.host.files import HostFiles
from arnes.sandbox.base import Sandbox
from arnes.session import Session
from arnes.workflow.teams import snapshot
from arnes.workflow.teams.clis import command_line
from arnes.workflow.teams.config import Node, Team
from arnes.workflow.teams.timeline import Timeline
from arnes.workflow.verify import run_check

MAX_STEPS = 40
EXTERNAL_TIMEOUT = 1800.0
_FAIL = re.compile(r"^\W*VERDICT\W*\s*FAIL\b", re.IGNORECASE | re.MULTILINE)

SessionFactory = Callable[[Path, bool], Session]  # (workspace, interactive) -> a session


@dataclass
class NodeResult:
    node: str
    passed: bool
    report: str
    wrote: list[str] = field(default_factory=list)


@dataclass
class TeamResult:
    passed: bool
    steps: list[NodeResult] = field(default_factory=list)
    conflicts: list[tuple[list[str], list[str]]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)  # read-only nodes that wrote anyway


@dataclass
class TeamRunner:
    team: Team
    workspace: Path
    make_session: SessionFactory
    timeline: Timeline
    verify_command: str | None = None  # what `verify = "auto"` means here (settings, else detected)
    # The sandbox a node's verify command runs in, for the copy it worked in (the agent's own).
    check_box: Callable[[Path], Sandbox] | None = None
    reports: dict[str, str] = field(default_factory=dict)

    def run(self, task: str) -> TeamResult:
        result = TeamResult(passed=True)
        taken: dict[int, int] = {}
        frontier = self.team.starts()
        steps = 0
        while frontier and steps < MAX_STEPS:
            wave = list(dict.fromkeys(frontier))
            steps += len(wave)
            finished = self._wave(wave, task, result)
            result.steps += finished
            frontier = []
            for done in finished:
                for index, edge in self.team.outgoing(done.node):
                    wanted = edge.when == "always" or (edge.when == "pass") == done.passed
                    if not wanted:
                        continue
                    if taken.get(index, 0) >= edge.max_rounds:
                        self.timeline.record(
                            "edge_limit", f"{edge.source} -> {edge.to}: round limit {edge.max_rounds} reached",
                            "yellow", source=edge.source, to=edge.to, max_rounds=edge.max_rounds,
                        )  # fmt: skip
                        continue
                    taken[index] = taken.get(index, 0) + 1
                    frontier.append(edge.to)
        latest = {step.node: step.passed for step in result.steps}  # a node's last word counts
        result.passed = all(latest.values()) and not result.conflicts and not result.violations
        self.timeline.record(
            "team_end", f"team {'PASS' if result.passed else 'FAIL'} after {steps} steps",
            "green" if result.passed else "red", status="pass" if result.passed else "fail", steps=steps,
        )  # fmt: skip
        return result

    # -- waves ---------------------------------------------------------------------------------
    def _wave(self, wave: list[str], task: str, result: TeamResult) -> list[NodeResult]:
        if len(wave) == 1 and not self.team.node(wave[0]).read_only:
            node = self.team.node(wave[0])
            before = snapshot.take(self.workspace)
            done = self._node(node, self.workspace, task, interactive=True)
            done.wrote = snapshot.changed(before, snapshot.take(self.workspace))
            self._record_writes(node, done.wrote, result)
            return [done]
        return self._parallel([self.team.node(n) for n in wave], task, result)

    def _parallel(self, nodes: list[Node], task: str, result: TeamResult) -> list[NodeResult]:
        """Each branch works in its own copy; what they write is compared, then brought back.

        A read-only node runs in a copy even alone: whatever it writes is reported, never kept.
        """
        if len(nodes) > 1:
            self.timeline.record(
                "parallel", f"in parallel: {', '.join(n.id for n in nodes)}", nodes=[n.id for n in nodes]
            )
        before = snapshot.take(self.workspace)
        with tempfile.TemporaryDirectory(prefix="arnes-team-") as tmp:
            copies = {n.id: Path(tmp) / n.id for n in nodes}
            for path in copies.values():
                shutil.copytree(self.workspace, path, symlinks=True, ignore=snapshot.special_files)
            with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
                futures = {n.id: pool.submit(self._node, n, copies[n.id], task, False) for n in nodes}
                done = [futures[n.id].result() for n in nodes]
            for node, outcome in zip(nodes, done, strict=True):
                outcome.wrote = snapshot.changed(before, snapshot.take(copies[node.id]))
                self._record_writes(node, outcome.wrote, result)
            owners: dict[str, list[str]] = {}
            for node, outcome in zip(nodes, done, strict=True):
                if node.read_only:
                    continue  # its writes are thrown away, so they cannot clash with a writer's
                for rel in outcome.wrote:
                    owners.setdefault(rel, []).append(node.id)
            clashing = sorted(rel for rel, who in owners.items() if len(who) > 1)
            if clashing:
                who = sorted({n for rel in clashing for n in owners[rel]})
                result.conflicts.append((who, clashing))
                self.timeline.record(
                    "conflict", f"CONFLICT: {', '.join(who)} all wrote {', '.join(clashing)}; none of it applied",
                    "bold red", nodes=who, files=clashing,
                )  # fmt: skip
            for node, outcome in zip(nodes, done, strict=True):
                if node.read_only:
                    continue  # a read-only node's writes are reported, never brought back
                for rel in outcome.wrote:
                    if rel not in clashing:
                        self._bring_back(node, copies[node.id], rel)
        return done

    def _bring_back(self, node: Node, copy: Path, rel: str) -> None:
        """A branch's file into the workspace: read through no link out of its copy, written on
        its real path inside the workspace (a link there to ~/.bashrc is refused, not followed)."""
        try:
            data = HostFiles(copy).read(rel)
            if data is not None:
                HostFiles(self.workspace).write(rel, data, judged=False)
            elif (self.workspace / rel).exists() or (self.workspace / rel).is_symlink():
                HostFiles(self.workspace).remove(rel)
        except OSError as exc:
            self.timeline.record(
                "not_brought_back", f"{node.id}: {rel} not brought back: {exc.strerror or exc}", "yellow",
                node=node.id, file=rel,
            )  # fmt: skip

    def _record_writes(self, node: Node, files: list[str], result: TeamResult) -> None:
        if not files:
            return
        if node.read_only:
            result.violations.append(node.id)
            line = f"READ-ONLY NODE {node.id} WROTE TO THE TREE: {', '.join(files)}"
            self.timeline.record("node_wrote", line, "bold red", node=node.id, files=files, read_only=True)
        else:
            line = f"node {node.id} wrote to the tree: {', '.join(files)}"
            self.timeline.record("node_wrote", line, "cyan", node=node.id, files=files, read_only=False)

    # -- one node ------------------------------------------------------------------------------
    def _node(self, node: Node, workspace: Path, task: str, interactive: bool) -> NodeResult:
        self.timeline.record(
            "node_start", f"{node.id} starts ({node.agent}{', read-only' if node.read_only else ''})",
            "bold", node=node.id, agent=node.agent, read_only=node.read_only,
        )  # fmt: skip
        prompt = self._prompt(node, task)
        if node.agent == "arnes":
            report, ok = self._arnes(node, workspace, prompt, interactive)
        else:
            report, ok = self._external(node, workspace, prompt)
        passed = ok and not _FAIL.search(report)
        command = self.verify_command if node.verify == "auto" else node.verify
        if passed and command:
            verdict = run_check(command, workspace, self.check_box(workspace) if self.check_box else None)
            passed = verdict.passed
            if not verdict.passed:
                report += f"\n\nThe verify command `{command}` is red:\n{verdict.output}"
        self.reports[node.id] = report
        self.timeline.record(
            "node_end", f"{node.id} ends: {'PASS' if passed else 'FAIL'}", "green" if passed else "red",
            detail=report, node=node.id, verdict="pass" if passed else "fail", report=report[-2000:],
        )  # fmt: skip
        return NodeResult(node.id, passed, report)

    def _prompt(self, node: Node, task: str) -> str:
        earlier = "\n\n".join(f"[{name}]\n{text.strip()}" for name, text in self.reports.items() if text.strip())
        parts = [node.prompt, f"The task:\n{task}"]
        if earlier:
            parts.append(f"Reports from earlier steps:\n{earlier}")
        return "\n\n".join(parts)

    def _arnes(self, node: Node, workspace: Path, prompt: str, interactive: bool) -> tuple[str, bool]:
        base = self.make_session(workspace, interactive)
        definition = base.agents.get(node.agent_def) if base.agents and node.agent_def else None
        if node.agent_def and definition is None:  # checked before the run; a copy may differ
            raise ConfigError(f"team {self.team.name}: node {node.id}: no agent definition {node.agent_def!r}")
        session = child_for(
            base, definition, read_only=node.read_only, parent_call=node.id, tool_names=node.tools, model=node.model,
            max_turns=base.limits.max_turns, self_check=node.verify is None,  # a verify runs the tests itself
        )  # fmt: skip
        refusals: list[tuple[str, str]] = []

        def collect(event: Event) -> None:
            # A write tool the node does not have, or a call the gate refused: both are refusals.
            refused = ("Unknown tool", "Permission denied", "The user denied")
            if isinstance(event, ToolResultEvent) and event.is_error and event.output.startswith(refused):
                refusals.append((event.name, event.output.splitlines()[0]))

        session.bus.subscribe(collect)
        # A node that writes the workspace itself is a checkpoint (DESIGN §17): `arnes rewind --session`
        # with the node's session id takes its changes back. Copies of parallel branches are not.
        checkpoints = base.checkpoints if workspace == self.workspace and not node.read_only else None
        try:
            if checkpoints is not None:
                checkpoints.begin("node", f"team {self.team.name}: node {node.id}")
            result = Agent(session).run(prompt)
        finally:
            if checkpoints is not None:
                checkpoints.close()
            # The node's sandbox stops with it: the mount points bubblewrap made in the tree
            # (an empty features.json) go before the tree is compared, not when the team ends.
            base.close()
        for tool, reason in refusals:
            self.timeline.record(
                "node_denied", f"{node.id}: {tool} refused ({reason})", "yellow", node=node.id, tool=tool, reason=reason
            )
        raise_for(result)  # Ctrl-C, a limit or a dead model end the team run, with their exit codes
        return result.text, True

    def _external(self, node: Node, workspace: Path, prompt: str) -> tuple[str, bool]:
        argv = command_line(node.agent, prompt, node.args, node.read_only, node.model)
        try:
            done = subprocess.run(
                argv, cwd=workspace, capture_output=True, text=True, timeout=EXTERNAL_TIMEOUT,
                stdin=subprocess.DEVNULL, check=False,
            )  # fmt: skip
        except FileNotFoundError:
            return f"{argv[0]} is not installed (not on PATH)", False
        except subprocess.TimeoutExpired:
            return f"{argv[0]} did not finish in {EXTERNAL_TIMEOUT:g} s", False
        return done.stdout.strip() or done.stderr.strip(), done.returncode == 0
