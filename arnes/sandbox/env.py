"""The environment a shell command gets: the names a build or a test needs, nothing else.

Provider keys and tokens in the environment are for arnes (and the user's own shell), not for
commands the model writes: `echo $X`, `env` or a test that prints its environment would hand them
to the model, and with the network on to anyone. A pattern of secret names cannot know them all
(`BW_SESSION`, `OP_SESSION_x`, `SLACK_WEBHOOK_URL`, `CI_JOB_JWT`, `TOKEN_GITHUB`, `SENTRY_DSN`,
`MYSQL_PWD` and `DOCKER_AUTH_CONFIG` went out past one), so commands get an allow list instead:
`ALLOWED`, names that say where things are and how to print or build, with a few values checked
(a locale must look like one, a URL must carry no user or password). Names the user's settings
list (sandbox.env_passthrough, exact names or globs) pass as they are. This holds with every
sandbox, `off` included, and for everything run through one: commands, hooks, verify and
self-check commands, and what starts an MCP server (its own `env` is added inside).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

# The POSIX locale categories, and glibc's own.
LOCALE_NAMES = frozenset({
    "LANG", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME",
    "LC_ADDRESS", "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_NAME", "LC_PAPER", "LC_TELEPHONE",
})  # fmt: skip

# What a build or a test needs, by name; their values say where and how, never who may do what.
# docs/shell.md lists them for the user.
ALLOWED = frozenset({
    # where and who
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TEMP", "TMP", "TZ",
    "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
    "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
    # the terminal and output
    "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS", "LINES", "CI",
    # the network a command may be given: proxies (never one with a user or password) and CA files
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "SSH_AUTH_SOCK",  # a path; the agent is reached only with the user's network and Unix sockets
    # git's identity for a commit
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL",
    # Python
    "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONUTF8",
    "PYTHONIOENCODING", "PYTHONHASHSEED", "PYTHONWARNINGS", "PYTHONFAULTHANDLER", "PYTHONDEVMODE",
    "PYENV_ROOT", "PYENV_VERSION", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE", "CONDA_PYTHON_EXE",
    "CONDA_SHLVL",
    # JavaScript
    "NODE_PATH", "NODE_OPTIONS", "NODE_ENV", "NVM_DIR", "NVM_BIN", "NVM_INC", "VOLTA_HOME", "BUN_INSTALL",
    "DENO_DIR", "PNPM_HOME", "FNM_DIR", "COREPACK_HOME",
    # Go
    "GOPATH", "GOROOT", "GOBIN", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB",
    "GOMODCACHE", "GOCACHE", "GO111MODULE", "GOTOOLCHAIN", "CGO_ENABLED", "GOOS", "GOARCH",
    # Rust
    "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "RUSTDOCFLAGS", "CARGO_TARGET_DIR",
    "CARGO_BUILD_JOBS", "CARGO_INCREMENTAL", "CARGO_TERM_COLOR", "RUST_BACKTRACE", "RUST_LOG",
    # JVM, .NET, Ruby and other toolchain roots
    "JAVA_HOME", "GRADLE_HOME", "GRADLE_USER_HOME", "MAVEN_HOME", "M2_HOME", "SDKMAN_DIR", "ANDROID_HOME",
    "ANDROID_SDK_ROOT", "DOTNET_ROOT", "DOTNET_CLI_TELEMETRY_OPTOUT", "DOTNET_NOLOGO", "GEM_HOME", "GEM_PATH",
    "RBENV_ROOT", "RBENV_VERSION", "ASDF_DIR", "ASDF_DATA_DIR", "MISE_DATA_DIR", "OPAMROOT", "JULIA_DEPOT_PATH",
    "ELAN_HOME", "HOMEBREW_PREFIX", "HOMEBREW_CELLAR", "HOMEBREW_REPOSITORY",
    # C and C++
    "CC", "CXX", "CPP", "LD", "AR", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS", "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "CMAKE_PREFIX_PATH",
    "CMAKE_GENERATOR", "CCACHE_DIR", "CUDA_HOME", "CUDA_PATH",
}) | LOCALE_NAMES | {"LANGUAGE"}  # fmt: skip

# `C`, `POSIX`, `en_US.UTF-8`, `C.UTF-8`, `de_DE@euro`, `sr_RS.UTF-8@latin`, `es_419.UTF-8`.
_LOCALE = re.compile(r"(C|POSIX|[a-z]{2,3}(_[A-Za-z0-9]{2,3})?)(\.[A-Za-z0-9-]{1,15})?(@[A-Za-z0-9]{1,15})?")
# A URL carrying a user name, with or without a password (postgres://user:pass@host, https://TOKEN@host).
_URL_WITH_USER = re.compile(r"[a-z][a-z0-9+.-]*://[^/@\s]*@", re.IGNORECASE)
# Whole-name patterns, case-insensitive: *_KEY, *_TOKEN, *PASSWORD*, provider prefixes, ...
_SECRET_NAME = re.compile(
    r"""(?ix)
    (^|_)(KEY|KEYS|APIKEY|TOKEN|TOKENS|SECRET|SECRETS|PASS|PASSWD|PASSPHRASE|CREDENTIALS?|AUTH|PAT)$
    | PASSWORD | SECRET | PRIVATE_KEY
    | ^(ANTHROPIC|OPENAI|AWS|GEMINI|MISTRAL|GROQ|COHERE|OPENROUTER|DEEPSEEK|TOGETHER|FIREWORKS)_
    """
)
QUIET_PAGERS = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


def looks_like_locale(value: str) -> bool:
    """A locale's name (`LANGUAGE` is a list of them, joined by `:`); empty means unset."""
    return all(part == "" or _LOCALE.fullmatch(part) for part in value.split(":"))


def looks_secret(name: str, value: str) -> bool:
    """A name or a value that says secret. Not enough to keep one out (see the module's
    docstring): mcp/expand.py holds it on top of its own allow list."""
    return bool(_SECRET_NAME.search(name) or _URL_WITH_USER.search(value))


# For the names the user set for the session (settings' `env`), whose values arnes would hand to
# commands (the model reads what they print): these words make a name secret anywhere in it, run
# together or not (`GITHUBTOKEN`, `npm_config__authToken`, `HONEYCOMB_WRITEKEY`, `GOOGLE_OAUTH_ID`);
# a false alarm keeps a harmless name from commands, a miss hands a key to the model.
_SECRET_PARTS = (
    "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "AUTH", "JWT", "WEBHOOK",
    "PRIVATE", "COOKIE", "SESSION", "SIGNATURE", "BEARER", "LOGIN", "CONNECTIONSTRING", "DSN", "CERT",
)  # fmt: skip
# ... and these only as a whole word (`PAT` is in PATH, `SK` in DISK, `PWD` alone is the working folder).
_SECRET_WORDS = frozenset({"PAT", "SK", "PWD", "PASS", "OTP", "PIN"})
# A value that carries a credential whatever its name: `...?password=...`, `AccountKey=...`, `Bearer ...`.
_SECRET_VALUE = re.compile(
    r"(?i)(password|passwd|pwd|secret|token|accountkey|sharedaccesskey|apikey|api_key|access_key|sig)=|bearer\s"
)


def secret_setting(name: str, value: str) -> bool:
    """`looks_secret`, much stricter: for names the user wrote into settings, not for the allow list."""
    upper = name.upper()
    joined = re.sub(r"[^A-Z0-9]", "", upper)
    words = set(re.split(r"[^A-Z0-9]+", upper)) - {""}
    if name == "PWD":
        return False
    return (
        looks_secret(name, value)
        or any(part in joined for part in _SECRET_PARTS)
        or bool(words & _SECRET_WORDS)
        or bool(_SECRET_VALUE.search(value))
    )


def allowed_value(name: str, value: str) -> bool:
    """Whether an ALLOWED name's value may pass: a locale that looks like one, no credentials in a URL."""
    if name in LOCALE_NAMES or name == "LANGUAGE":
        return looks_like_locale(value)
    return not _URL_WITH_USER.search(value)


def command_env(environ: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """The ALLOWED names of `environ` (with values that pass) and those `passthrough` names, with
    pagers that never wait."""
    chosen = tuple(passthrough)
    kept = {
        name: value
        for name, value in environ.items()
        if (name in ALLOWED and allowed_value(name, value)) or any(fnmatch.fnmatchcase(name, g) for g in chosen)
    }
    return {**kept, **QUIET_PAGERS}


# Search paths whose relative (or empty) entries mean the folder a program runs in.
