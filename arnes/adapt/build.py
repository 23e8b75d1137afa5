"""A profile's steering set and edit format, made into the pieces of one session."""

from __future__ import annotations

from arnes.adapt.draws import Draws
from arnes.adapt.focus import Focusing
from arnes.adapt.piece import Env, Piece
from arnes.adapt.pieces.check_before_done import CheckBeforeDone
from arnes.adapt.pieces.contract_help import ContentCheck, NamedFiles, RenameLeftovers, UndoGuard, WholeSmallFile
from arnes.adapt.pieces.edit_format import SEARCH_REPLACE_PROMPT, WHOLE_PROMPT, SearchReplace, WholeFiles
from arnes.adapt.pieces.focus import Focus
from arnes.adapt.pieces.fresh_draws import FreshDraws
from arnes.adapt.pieces.nudges import Nudges, SameReply
from arnes.adapt.pipeline import Pipeline
from arnes.adapt.shared import TurnState
from arnes.agent.steering import NoSteering, Steering
from arnes.llm.profiles import STEERING, pieces_of


def build_steering(steering: str, env: Env) -> Steering:
    """The session's `Steering`: `NoSteering` when no piece runs, so `off` cannot change a call."""
    names = pieces_of(steering)
    state = TurnState()
    pieces: list[Piece] = []
    if env.edit_format == "whole":
        pieces.append(WholeFiles(env))
    elif env.edit_format == "search-replace":
        pieces.append(SearchReplace(env))
    for name in names:
        if name == "fresh-draws":
            if env.draws > 0 and "self-check" in names:  # the tests judge each draw
                state.draws = Draws(env.draws)
                pieces.append(FreshDraws(state))
        elif name == "focus":
            if "self-check" in names:  # the tests say which test fails
                state.focus = Focusing()
                pieces.append(Focus(env, state))
        elif name == "named-files":
            pieces.append(NamedFiles(env, spare_kept="spare-kept" in names))
        elif name == "small-read":
            pieces.append(WholeSmallFile(env))
        elif name == "content-check":
            pieces.append(ContentCheck(env))
        elif name == "undo-guard":
            pieces.append(UndoGuard(env))
        elif name == "rename-leftovers":
            pieces.append(RenameLeftovers(env))
        elif name == "nudge":
            pieces.append(Nudges(env, state, make_offered="same-reply" in names))
        elif name == "same-reply":
            pieces.append(SameReply())
        elif name == "self-check":
            pieces.append(CheckBeforeDone(env, state))
    if not pieces:
        return NoSteering()
    note = {"whole": WHOLE_PROMPT, "search-replace": SEARCH_REPLACE_PROMPT}.get(env.edit_format, "")
    return Pipeline(pieces, note)


def piece_names() -> list[str]:
    """Every piece a steering set may name, for error messages and docs."""
    return sorted({n for names in STEERING.values() for n in names} | {"whole", "search-replace"})
