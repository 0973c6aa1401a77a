"""The steps of receval's GitHub Action (action.yml at the repository's root), in one script.

`python3 receval_action.py install` makes a virtual environment in `$RUNNER_TEMP` and pip
installs receval there: the action's own checkout (`$GITHUB_ACTION_PATH`, the ref named
in `uses:`) unless the `package` input names a wheel file (a glob such as
`dist/receval-*.whl` that matches one file), a folder or a requirement; `extras` adds
extras to a checkout, a folder or a wheel. It sets the step's output `receval`: the path
of the installed command.

`python3 receval_action.py run` runs `receval run CONFIG` with the outputs the inputs ask
for: the Markdown report appended to `$GITHUB_STEP_SUMMARY` (`summary`), GitHub
annotations on standard output (`annotations`), the JSON report (`json`) and JUnit XML
(`junit`) written to files, any further `--output` (`outputs`, one a line) and arguments
(`args`, split as a shell splits them). It sets the step's outputs `exit-code`, `verdict`
(`passed`, `failed`: a gate failed, or `error`), `report` and `junit` (the files written;
empty when none was) and exits with receval's exit code: 0, 1 for a failed gate, 2 for a
bad config or input, and so on (docs/reports.md). A run that ends with neither 0 nor 1
also gets an error annotation and a line in the summary with receval's message.

Every input comes in an environment variable, `INPUT_` and the input's name in capitals
(`INPUT_CONFIG`, ...), as action.yml passes them: never pasted into a command line. The
command is `$RECEVAL_BIN` (the install step's output), else `receval` on the PATH. Standard
library only: it runs before receval is installed. tests/cli/test_github_action.py runs
it with fake `GITHUB_STEP_SUMMARY` and `GITHUB_OUTPUT` files.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from collections import deque
from pathlib import Path

BAD_INPUT = 2  # receval's exit code for a bad config or input (receval_cli/exit_codes.py)
VERDICTS = {0: "passed", 1: "failed"}
TRUE, FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off", "")
FILES = {"json": "receval-report.json", "junit": "receval-junit.xml"}  # the defaults
MEANINGS = {
    2: "bad usage, config or input",
    3: "internal error (a bug; please report it)",
    4: "out of memory",
}


class ActionError(Exception):
    """An input the action cannot use: one error annotation, exit 2."""


def read_input(name: str, default: str = "") -> str:
    """An input of the action, as action.yml passes it (`INPUT_CONFIG` for `config`)."""
    return os.environ.get("INPUT_" + name.upper().replace("-", "_"), default).strip()


def flag(name: str, default: str) -> bool:
    """A true/false input (`true`, `false`, `yes`, `no`, `1`, `0`, `on`, `off`)."""
    value = read_input(name, default).lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ActionError(f"input {name}: {value!r} is neither true nor false")


def escaped(text: str, in_property: bool = False) -> str:
    """Text made safe for a workflow command (`::error title=PROPERTY::DATA`)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if in_property else text


def annotate(title: str, message: str) -> None:
    """An error annotation on the run's page (a workflow command on standard output)."""
    print(f"::error title={escaped(title, True)}::{escaped(message)}", flush=True)


def set_outputs(outputs: dict[str, str]) -> None:
    """The step's outputs, appended to `$GITHUB_OUTPUT` (printed where it is not set)."""
    lines = []
    for name, value in outputs.items():
        if "\n" in value or "\r" in value:
            delimiter = f"receval_{uuid.uuid4().hex}"
            lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            lines.append(f"{name}={value}\n")
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as file:
            file.write("".join(lines))
    else:
        print("outputs (no $GITHUB_OUTPUT):\n" + "".join(lines), end="", flush=True)


def venv_command(venv: Path, name: str) -> Path:
    """A command of a virtual environment (`bin/` on Linux and macOS, `Scripts\\` on Windows)."""
    if os.name == "nt":
        return venv / "Scripts" / f"{name}.exe"
    return venv / "bin" / name


def what_to_install() -> str:
    """pip's argument: the `package` input (a glob matched to its one file), else the
    action's checkout; an existing path made absolute, `extras` appended to it."""
    package = read_input("package")
    extras = read_input("extras").replace(" ", "")
    if not package:
        action_path = os.environ.get("GITHUB_ACTION_PATH", "")
        if not action_path:
            raise ActionError("no package input and no $GITHUB_ACTION_PATH: nothing to install")
        package = action_path
    elif glob.has_magic(package):
        matches = sorted(glob.glob(package))
        if len(matches) != 1:
            found = ", ".join(matches) or "nothing"
            raise ActionError(f"input package: {package} should match one file; it matches {found}")
        package = matches[0]
    if Path(package).exists():  # a path, not a requirement ("folder", not on the index)
        package = str(Path(package).resolve())
    elif extras:
        raise ActionError(
            f"input extras: {extras} applies to a checkout, a folder or a wheel file; "
            f"write them in the requirement instead (receval[{extras}]==VERSION)"
        )
    return f"{package}[{extras}]" if extras else package


def install() -> int:
    """Make the virtual environment, pip install receval in it, set the output `receval`."""
    package = what_to_install()
    if sys.version_info < (3, 11):  # noqa: UP036 (any runner Python runs this script)
        raise ActionError(
            f"receval needs Python 3.11 or newer; {sys.executable} is "
            f"{sys.version.split()[0]}: name another in the python input, or run "
            "actions/setup-python first"
        )
    venv = Path(os.environ.get("RUNNER_TEMP") or ".") / "receval-venv"
    pip = [str(venv_command(venv, "python")), "-m", "pip", "install"]
    steps = [
        (
            [sys.executable, "-m", "venv", "--clear", str(venv)],
            "could not make a virtual environment",
        ),
        (
            [*pip, "--disable-pip-version-check", "--quiet", package],
            f"pip could not install {package}",
        ),
        ([str(venv_command(venv, "receval")), "--version"], "the installed receval does not start"),
    ]
    for command, failed in steps:
        print("receval: " + shlex.join(command), flush=True)
        try:
            code = subprocess.run(command, check=False).returncode
        except OSError as error:
            raise ActionError(f"{failed}: {error}") from None
        if code != 0:
            raise ActionError(f"{failed} (exit {code}; the step's log says why)")
    set_outputs({"receval": str(venv_command(venv, "receval"))})
    return 0


def receval_arguments(summary: str | None) -> list[str]:
    """`receval run`'s arguments, from the inputs."""
    config = read_input("config")
    if not config:
        raise ActionError("input config is required: the path of receval's config file")
    arguments = ["run", config]
    if summary is not None:
        arguments += ["-o", f"markdown:{summary}", "--append"]
    if flag("annotations", "true"):
        arguments += ["-o", "github:-"]
    for name, default in FILES.items():
        path = read_input(name, default)
        if path:
            arguments += ["-o", f"{name}:{path}"]
    for output in read_input("outputs").splitlines():
        if output.strip():
            arguments += ["-o", output.strip()]
    try:
        arguments += shlex.split(read_input("args"))
    except ValueError as error:
        raise ActionError(f"input args: {error}") from None
    return arguments


def receval_command() -> str:
    """The receval command: the install step's (`$RECEVAL_BIN`), else the PATH's."""
    command = os.environ.get("RECEVAL_BIN", "").strip() or "receval"
    found = shutil.which(command)
    if found is None:
        raise ActionError(f"no receval command: {command} is not an executable file")
    return found


def run() -> int:
    """Run `receval run`, pass its standard output through and its stderr on (kept for a
    failure's annotation), set the outputs, return its exit code."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY") if flag("summary", "true") else None
    command = [receval_command(), *receval_arguments(summary or None)]
    print("receval: " + shlex.join(command), flush=True)
    written = {name: read_input(name, default) for name, default in FILES.items()}
    for path in written.values():
        if path and Path(path).is_file():
            Path(path).unlink()  # a stale report would read as this run's
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, errors="replace")
    assert process.stderr is not None
    said: deque[str] = deque(maxlen=20)  # the end of what it said, for an error's annotation
    for line in process.stderr:
        sys.stderr.write(line)
        sys.stderr.flush()
        said.append(line)
    code = process.wait()
    if code < 0:  # ended by a signal: the status a shell reports, 128 + the signal's number
        code = 128 - code
    verdict = VERDICTS.get(code, "error")
    if verdict == "error":
        message = "".join(said).strip() or "no message"
        meaning = MEANINGS.get(code, "stopped")
        annotate(f"receval exited {code}", message)
        if summary:
            with open(summary, "a", encoding="utf-8") as file:
                file.write(f"### receval exited {code} ({meaning})\n\n```\n{message}\n```\n")
    set_outputs(
        {
            "exit-code": str(code),
            "verdict": verdict,
            "report": written["json"]
            if written["json"] and Path(written["json"]).is_file()
            else "",
            "junit": written["junit"]
            if written["junit"] and Path(written["junit"]).is_file()
            else "",
        }
    )
    return code


def main(argv: list[str]) -> int:
    steps = {"install": install, "run": run}
    if len(argv) != 2 or argv[1] not in steps:
        print(f"usage: {Path(argv[0]).name} install|run (inputs in INPUT_* variables)")
        return BAD_INPUT
    try:
        return steps[argv[1]]()
    except ActionError as error:
        annotate("receval action", str(error))
        set_outputs({"exit-code": str(BAD_INPUT), "verdict": "error"})
        return BAD_INPUT


if __name__ == "__main__":
    sys.exit(main(sys.argv))
