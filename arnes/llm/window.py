"""Ask a local server how large its context window is (DESIGN §11).

Without it arnes assumed the profile's window (128k for `--provider openai`) while llama.cpp served
2,048 tokens, and the first long request failed with HTTP 400. llama.cpp says it in `GET /props`
(`default_generation_settings.n_ctx`, per slot); Ollama in `POST /api/show` (`parameters` num_ctx
when the Modelfile sets one, else `model_info.<arch>.context_length`, what the model was trained
for). Stdlib only and a short time-out: start-up must stay fast, and a server that does not
answer this just leaves the window to the profile.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from arnes.nesting import json_loads

PROBE_TIMEOUT = 5.0


@dataclass(frozen=True)
class ServerWindow:
    tokens: int
    source: str  # what answered, for the banner: "server /props", "server /api/show"


def server_root(base_url: str) -> str:
    """`http://host:8080/v1` -> `http://host:8080`: the native endpoints live beside /v1."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def probe_window(provider: str, base_url: str | None, model: str, cap: int) -> ServerWindow | None:
    """The server's window, or None when it is not a local server that says (cloud APIs do not).

    `cap` bounds a model's trained length on Ollama: its window is allocated as asked, and 128k
    of KV cache does not fit a laptop; a Modelfile's own num_ctx is taken as it is.
    """
    if not base_url:
        return None
    root = server_root(base_url)
    if provider == "ollama":
        show = _fetch(f"{root}/api/show", {"model": model, "name": model})  # "name": before Ollama 0.3
        return _from_show(show, cap) if show else None
    if provider == "openai":
        props = _fetch(f"{root}/props", None)
        n_ctx = _n_ctx(props) if props else None
        return ServerWindow(n_ctx, "server /props") if n_ctx else None
    return None


def _n_ctx(props: dict[str, Any]) -> int | None:
    settings = props.get("default_generation_settings")
    for holder in (settings if isinstance(settings, dict) else {}, props):
        value = holder.get("n_ctx")
        if isinstance(value, int) and value > 0:
            return value
    return None


def _from_show(show: dict[str, Any], cap: int) -> ServerWindow | None:
    params = show.get("parameters")
    if isinstance(params, str):
        match = re.search(r"^\s*num_ctx\s+(\d+)\s*$", params, re.MULTILINE)
        if match:
            return ServerWindow(int(match.group(1)), "server /api/show num_ctx")
    info = show.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if key.endswith(".context_length") and isinstance(value, int) and value > 0:
                note = f" (trained for {value}, capped)" if value > cap else ""
                return ServerWindow(min(value, cap), f"server /api/show{note}")
    return None


def _fetch(url: str, body: dict[str, Any] | None) -> dict[str, Any] | None:
    """GET (or POST `body`) without proxies: these are servers on the user's own machine or LAN."""
    data = json.dumps(body).encode() if body is not None else None
    import urllib.error  # here, not at the top: urllib.request brings http.client, email and ssl
    import urllib.request  # (~10 ms), and most runs (cloud APIs, a known window) never probe

    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=PROBE_TIMEOUT) as response:
            value = json_loads(response.read(1_000_000))
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None
