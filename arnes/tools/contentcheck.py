"""Whether new file content is what its kind says: JSON and TOML parse, Python parses, YAML
meant as JSON. Write and Edit ask before they write; nothing here runs what it reads."""

from __future__ import annotations

import ast
import json
import tomllib

CODE_NOT_WORDS = "Send the change as code (statements, not a description of them), with the file's indentation."

# No sample values: the 1.5B model copied a sample object into config.json word for word.
EXAMPLES = {
    ".json": " (JSON: an object in { }, every key and every string in double quotes, numbers and "
    "true/false/null bare, a comma between items)"
}


def yaml_as_json(content: str) -> str | None:
    """The JSON for content that is a YAML mapping or list (a 1.5B model:
    `name: shop\nport: 8080\ndebug: false`, sent again word for word after being told it is not
    JSON); None when it is not one, or holds what JSON cannot (dates)."""
    import yaml  # pyyaml: already a dependency (extension front matter)

    from arnes import yamlfile

    if len(content) > 20_000:
        return None
    try:
        # No anchors (shared in YAML, each one is copied out in JSON: a few lines of `&a [*a, *a]`
        # would grow without end) and no deep nesting: yamlfile refuses both, a ValueError.
        value = yamlfile.load(content)
        if not isinstance(value, dict | list) or not value:
            return None
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    except (yaml.YAMLError, TypeError, ValueError):
        return None


def not_json_at_all(content: str, suffix: str) -> bool:
    """A .json file whose content opens like no JSON dialect (not `{`, `[` or a JSONC comment):
    refused every time, with no "call it again" way out. The 1.5B model re-sent its YAML
    config.json word for word and the second call went through; a JSONC tsconfig.json with
    comments still has the way out."""
    head = content.lstrip()
    return suffix.lower() == ".json" and not head.startswith(("{", "[", "//", "/*"))


def data_problem(content: str, suffix: str) -> str:
    """What is wrong with a data file's new content ("JSON (...)"), or "" when it parses or is not one.

    A small model asked for config.json wrote `name: shop\nport: 8080` (YAML) and called it done;
    the parser's one line lets the next try be JSON. TOML is checked the same way (stdlib only).
    """
    kind = suffix.lower()
    if kind == ".json" and content.strip():
        try:
            json.loads(content)
        except json.JSONDecodeError as exc:
            return f"JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        except (RecursionError, ValueError):
            pass  # nested past Python's limit, a number of 5000 digits: not judged
    if kind == ".toml":
        try:
            tomllib.loads(content)
        except tomllib.TOMLDecodeError as exc:
            return f"TOML ({exc})"
        except (RecursionError, ValueError):
            pass
    return ""


def code_problem(before: str, after: str, suffix: str) -> str:
    """ "Python (invalid syntax at line 2: `...`)" when `after` breaks a Python file that parsed
    before (or is new), else "". Parsed only, never run.

    Qwen2.5-Coder-1.5B: new_string was the task's own words after `return`
    (`return 'Fizz' for multiples of 3, ...`), and the run ended calling it done. A file that
    did not parse before is left alone: its grammar may be newer than this Python's.
    """
    if suffix.lower() not in (".py", ".pyi") or not after.strip():
        return ""
    if before.strip() and _python_error(before) is not None:
        return ""
    error = _python_error(after)
    if error is None:
        return ""
    lines = after.split("\n")
    where = error.lineno or 0
    text = lines[where - 1].strip()[:120] if 0 < where <= len(lines) else ""
    return f"Python ({error.msg} at line {where}: `{text}`)" if text else f"Python ({error.msg} at line {where})"


def _python_error(text: str) -> SyntaxError | None:
    try:
        compile(text, "<edit>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError):  # null bytes, nesting: not ours to judge
        return None
    return None
