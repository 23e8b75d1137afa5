"""Wrappers (`timeout`, `nice`, `env X=1`, `xargs`, `sudo`, ...): looked through, not trusted.

A wrapper runs the command after its own options, so rules are judged on that command; what the
wrapper adds (another user, arguments from standard input) is kept on the `SimpleCommand`.
"""

from __future__ import annotations

from arnes.permissions.simplecommand import SimpleCommand

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
    "coreutils": (frozenset(), 0),  # the multi-call binary: `coreutils rm -rf x` is rm
    # GNU parallel runs its command once per argument after `:::`; judged as that command.
    "parallel": (frozenset("-j -P --jobs -S --sshlogin --joblog --results -a --arg-file --delimiter -d".split()), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "unbuffer": (frozenset(), 0),
    "fakeroot": (frozenset({"-l", "--lib", "--faked", "-s", "-i"}), 0),
    "pkexec": (frozenset({"--user"}), 0),
    "catchsegv": (frozenset(), 0),
    "dbus-run-session": (frozenset({"--config-file", "--dbus-daemon"}), 0),
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
    # util-linux's: limits, credentials and personality for the command that follows.
    "prlimit": (frozenset({"-p", "--pid", "-o", "--output"}), 0),
    "setpriv": (
        frozenset(
            """--reuid --regid --ruid --rgid --euid --egid --groups --inh-caps --ambient-caps --bounding-set
            --securebits --pdeathsig --selinux-label --apparmor-profile --landlock-access --landlock-rule
            --seccomp-filter""".split()
        ),
        0,
    ),
    "setarch": (frozenset(), 1),  # setarch ARCH [options] [program]
    **{arch: (frozenset(), 0) for arch in ("linux32", "linux64", "i386", "x86_64", "uname26")},
    "valgrind": (frozenset(), 0),  # its own options are --name=value
    "xargs": (
        frozenset(
            """-a -d -E -e -I -i -L -l -n -P -s --arg-file --delimiter --max-args --max-procs --max-lines
            --replace --max-chars --eof""".split()
        ),
        0,
    ),
}


# Programs that run what they are told in a language of their own (a debugger's commands, a shell
# for capsh's arguments): whatever follows them cannot be judged as a command here.
OPAQUE_PROGRAMS = frozenset({"gdb", "lldb", "capsh"})

OPAQUE_OPTIONS = {
    "env": ("-S", "--split-string"),  # a whole command line packed in one argument
    "flock": ("-c", "--command"),
    "sudo": ("-s", "--shell", "-i", "--login"),
    "script": ("-c", "--command"),
    "runuser": ("-c", "--command"),
}


# A wrapper's own options that run its command in another folder or root, or make it write a file:
# the command's paths would be judged from the wrong place (`env -C ~/.ssh cat id_rsa`), or the
# write would go unseen (`strace -o ~/.bashrc cat a.txt`). Only the wrapper's options count.
MOVING_OPTIONS = {
    "env": ("-C", "--chdir"),
    "sudo": ("-D", "--chdir", "-R", "--chroot"),
    "unshare": ("-w", "--wd", "-R", "--root"),
    "nsenter": ("-w", "--wd", "-r", "--root"),
    "strace": ("-o", "--output"),
    "time": ("-o", "--output"),
}


def _has_option(word: str, option: str) -> bool:
    """`--long`, `--long=x`, or a short option anywhere in a bundle (`-iS` has `-S`)."""
    if option.startswith("--"):
        return word == option or word.startswith(option + "=")
    return word.startswith("-") and not word.startswith("--") and option[1] in word[1:]


def unwrap(cmd: SimpleCommand) -> str | None:
    """Peel wrappers off the front of `cmd.words` (looked through, not trusted).

    Returns a reason when a wrapper hides its command in a way that cannot be read here.
    """
    if cmd.words and cmd.words[0].rsplit("/", 1)[-1] in OPAQUE_PROGRAMS and len(cmd.words) > 1:
        name = cmd.words[0].rsplit("/", 1)[-1]
        cmd.wrappers.append(name)
        cmd.words = []
        return f"{name} runs commands of its own language, which cannot be checked here"
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
                if any(_has_option(word, o) for o in MOVING_OPTIONS.get(name, ())):
                    cmd.wrappers.append(name)
                    cmd.words = []
                    return f"{name} {word.split('=', 1)[0]} runs the command elsewhere or writes a file"
                if word.split("=", 1)[0] in takes_value and "=" not in word:
                    i += 1
                elif name == "nice" and word[1:].isdigit():
                    pass
            else:
                break
            i += 1
        i += positional
        cmd.wrappers.append(name)
        if name in ("xargs", "parallel"):
            cmd.unknown_args = True
            replace = _xargs_replace(cmd.words[1:i])
            if i >= len(cmd.words):  # bare xargs runs echo
                cmd.words = ["echo"]
                return None
            if replace:  # each word holding the replace-string is a line of input
                cmd.words = cmd.words[:i] + ["$?" if replace in w else w for w in cmd.words[i:]]
        cmd.words = cmd.words[i:]
    if cmd.unknown_args and not cmd.words:
        return "xargs runs a command named in its input"
    return None


def _xargs_replace(options: list[str]) -> str | None:
    """The replace-string of `xargs -I R`, `-IR`, `-i[R]`, `--replace[=R]` (default `{}`)."""
    for n, word in enumerate(options):
        if word == "-I" and n + 1 < len(options):
            return options[n + 1]
        if word.startswith("-I") and len(word) > 2:
            return word[2:]
        if word.startswith("-i"):
            return word[2:] or "{}"
        if word.startswith("--replace"):
            return word.split("=", 1)[1] if "=" in word else "{}"
    return None
