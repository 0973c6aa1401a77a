"""receval's GitHub Action: action.yml at the repository's root, a composite action whose
steps run .github/actions/receval_action.py; the script run here as the runner runs it,
with the inputs in INPUT_* variables and files for `$GITHUB_STEP_SUMMARY` and
`$GITHUB_OUTPUT`.

The quick tests run the script around a stand-in receval (a script that records its
arguments and exits with the code it is told); the slow ones around the real receval on
the bundled sample data: a passing gate, a failing one, a missing config. .ci/run also
runs the action's two steps on a wheel (.ci/action_from_wheel).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
SCRIPT = ROOT / ".github" / "actions" / "receval_action.py"
QUICKSTART = ROOT / "configs" / "quickstart.yaml"
RECEVAL = Path(sys.executable).parent / "receval"
# the stand-in: records its arguments, writes the files named `-o FORMAT:PATH`, says
# something on stderr and exits with $FAKE_CODE
FAKE = """
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_ARGS"], "w") as file:
    json.dump(args, file)
for flag, value in zip(args, args[1:]):
    if flag == "-o" and ":" in value and value.split(":", 1)[1] != "-":
        kind, path = value.split(":", 1)
        with open(path, "a") as file:
            file.write(f"{kind} report\\n")
print("::warning title=receval::a warning", flush=True)
print("error: something about the config", file=sys.stderr, flush=True)
code = int(os.environ["FAKE_CODE"])
if code < 0:
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def outputs_of(path: Path) -> dict[str, str]:
    """A `$GITHUB_OUTPUT` file read as the runner reads it (`name=value`, and `name<<END`
    ... `END` for a value of several lines)."""
    found: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, end = line.split("<<", 1)
            found[name] = "\n".join(iter(lambda: next(lines), end))
        else:
            name, value = line.split("=", 1)
            found[name] = value
    return found


def run_step(
    folder: Path, step: str, inputs: dict[str, str], receval: Path | None = None
) -> tuple[int, str, str, dict[str, str], str]:
    """The script's step in `folder` (the runner's working directory): exit code, stdout,
    stderr, the outputs and the step summary."""
    summary, outputs = folder / "summary.md", folder / "outputs.txt"
    summary.write_text("earlier step\n", encoding="utf-8")
    outputs.write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    env.update(
        {
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_ACTION_PATH": str(ROOT),
            "RUNNER_TEMP": str(folder),
            "RECEVAL_BIN": str(receval or RECEVAL),
            "NO_COLOR": "1",
            **{f"INPUT_{name.upper().replace('-', '_')}": v for name, v in inputs.items()},
        }
    )
    done = subprocess.run(
        [sys.executable, str(SCRIPT), step],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    written = outputs_of(outputs)
    return done.returncode, done.stdout, done.stderr, written, summary.read_text(encoding="utf-8")


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-in receval, an executable script; its arguments land in args.json."""
    path = tmp_path / "bin" / "receval"
    path.parent.mkdir()
    path.write_text(f"#!{sys.executable}\n{FAKE}", encoding="utf-8")
    path.chmod(0o755)
    monkeypatch.setenv("FAKE_ARGS", str(tmp_path / "args.json"))
    return path


def test_action_yml_is_a_composite_action_of_the_script() -> None:
    """A composite action whose steps run the script's install and run steps, passing every
    input the script reads as its INPUT_ variable (and none it does not declare); its
    outputs are the steps' outputs the script sets."""
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    steps = {step["id"]: step for step in action["runs"]["steps"]}
    assert list(steps) == ["install", "run"]
    script = SCRIPT.relative_to(ROOT).as_posix()
    for name, step in steps.items():
        assert step["shell"] == "bash"
        assert shlex.split(step["run"]) == ["$INPUT_PYTHON", f"$GITHUB_ACTION_PATH/{script}", name]
    source = SCRIPT.read_text(encoding="utf-8")
    read = set(re.findall(r"(?:read_input|flag)\(\s*\"([a-z-]+)\"", source))
    read |= {"json", "junit"}  # read through FILES
    passed = {
        name.removeprefix("INPUT_").lower().replace("_", "-"): value
        for step in steps.values()
        for name, value in step["env"].items()
        if name.startswith("INPUT_")
    }
    assert read | {"python"} == set(action["inputs"]) == set(passed)
    for name, value in passed.items():
        assert value == "${{ inputs." + name + " }}"
    assert [name for name, spec in action["inputs"].items() if spec.get("required")] == ["config"]
    assert steps["run"]["env"]["RECEVAL_BIN"] == "${{ steps.install.outputs.receval }}"
    for name, spec in action["outputs"].items():
        step, output = re.fullmatch(
            r"\$\{\{ steps\.(\w+)\.outputs\.([\w-]+) \}\}", spec["value"]
        ).groups()
        assert step in steps
        assert f'"{output}"' in source, f"the script sets no output {output} ({name})"


@pytest.mark.parametrize(
    ("ends", "code", "verdict"),
    [(0, 0, "passed"), (1, 1, "failed"), (2, 2, "error"), (3, 3, "error"), (-15, 143, "error")],
)
def test_the_exit_code_is_receval_s(
    tmp_path: Path, fake: Path, monkeypatch: pytest.MonkeyPatch, ends: int, code: int, verdict: str
) -> None:
    """Whatever receval exits with is the step's exit code and its `exit-code` output (a
    stop by SIGTERM: 143, as a shell reports it); the verdict is passed (0), failed (1: a
    gate) or error; receval's stdout (the annotations) and stderr pass through; an error
    is annotated with its message and told in the summary after what earlier steps
    wrote."""
    monkeypatch.setenv("FAKE_CODE", str(ends))
    exit_code, out, err, outputs, summary = run_step(tmp_path, "run", {"config": "c.yaml"}, fake)
    assert exit_code == code
    assert outputs["exit-code"] == str(code)
    assert outputs["verdict"] == verdict
    assert outputs["report"] == "receval-report.json"
    assert outputs["junit"] == "receval-junit.xml"
    assert "::warning title=receval::a warning" in out
    assert "error: something about the config" in err
    assert summary.startswith("earlier step\nmarkdown report\n")
    if verdict == "error":
        assert f"::error title=receval exited {code}::error: something about the config" in out
        assert f"### receval exited {code}" in summary
    else:
        assert "::error" not in out
        assert "receval exited" not in summary


def test_the_inputs_make_the_command_line(
    tmp_path: Path, fake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outputs each in its format (the summary appended to), the further outputs one
    a line, the arguments split as a shell splits them; an empty json or junit input, or
    summary/annotations false, leaves that output out."""
    monkeypatch.setenv("FAKE_CODE", "0")
    inputs = {
        "config": "my config.yaml",
        "outputs": "report.html\n  csv:metrics.csv \n",
        "args": "--label 'nightly run' --set cutoffs=[10]",
    }
    run_step(tmp_path, "run", inputs, fake)
    everything = json.loads((tmp_path / "args.json").read_text(encoding="utf-8"))
    inputs |= {"json": "", "junit": "j.xml", "summary": "false", "annotations": "no"}
    code, _, _, outputs, summary = run_step(tmp_path, "run", inputs, fake)
    fewer = json.loads((tmp_path / "args.json").read_text(encoding="utf-8"))
    summary_file = str(tmp_path / "summary.md")
    further = ["-o", "report.html", "-o", "csv:metrics.csv"]
    further += ["--label", "nightly run", "--set", "cutoffs=[10]"]
    assert everything == [
        "run", "my config.yaml", "-o", f"markdown:{summary_file}", "--append", "-o", "github:-",
        "-o", "json:receval-report.json", "-o", "junit:receval-junit.xml", *further,
    ]  # fmt: skip
    assert fewer == ["run", "my config.yaml", "-o", "junit:j.xml", *further]
    assert code == 0
    assert outputs["report"] == ""
    assert summary == "earlier step\n"


@pytest.mark.parametrize(
    ("step", "inputs", "said"),
    [
        ("run", {}, "input config is required"),
        ("run", {"config": "c.yaml", "annotations": "maybe"}, "input annotations: 'maybe' is"),
        ("run", {"config": "c.yaml", "args": "--label 'open"}, "input args: No closing quotation"),
        ("install", {"package": "dist/nothing-*.whl"}, "should match one file; it matches nothing"),
        (
            "install",
            {"package": "receval==0.2.0", "extras": "html"},
            "write them in the requirement",
        ),
    ],
)
def test_an_input_the_action_cannot_use_is_exit_2(
    tmp_path: Path, fake: Path, step: str, inputs: dict[str, str], said: str
) -> None:
    """One error annotation that says which input and why, exit 2 and its outputs; receval
    is not run, nothing is installed."""
    code, out, _, outputs, _ = run_step(tmp_path, step, inputs, fake)
    assert code == 2
    assert out.startswith("::error title=receval action::")
    assert said in out
    assert outputs == {"exit-code": "2", "verdict": "error"}
    assert not (tmp_path / "args.json").exists()
    assert not (tmp_path / "receval-venv").exists()


def test_no_receval_command_is_exit_2(tmp_path: Path) -> None:
    code, out, _, _, _ = run_step(tmp_path, "run", {"config": "c.yaml"}, tmp_path / "nothing")
    assert code == 2
    assert "no receval command" in out


def test_outputs_of_several_lines_are_delimited(tmp_path: Path) -> None:
    """A value with a line break is written as `name<<DELIMITER`, as the runner reads it."""
    target = tmp_path / "outputs.txt"
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('action', {str(SCRIPT)!r})\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        "module.set_outputs({'one': 'a', 'two': 'b\\nc'})\n"
    )
    env = {**os.environ, "GITHUB_OUTPUT": str(target)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert outputs_of(target) == {"one": "a", "two": "b\nc"}


@pytest.mark.slow  # three runs of receval, each a new process
def test_the_real_receval_on_the_sample_data(tmp_path: Path) -> None:
    """The quick start's config passes (exit 0): the Markdown report in the summary after
    what was there, the JSON and JUnit reports written and named in the outputs, the
    annotations' summary line printed. Its gate raised above the model's value fails
    (exit 1): an error annotation, a failed JUnit test case. A missing config is exit 2
    with receval's message annotated and in the summary, and no report named."""
    code, out, _, outputs, summary = run_step(tmp_path, "run", {"config": str(QUICKSTART)})
    assert code == 0
    assert outputs == {
        "exit-code": "0", "verdict": "passed", "report": "receval-report.json",
        "junit": "receval-junit.xml",
    }  # fmt: skip
    assert summary.startswith("earlier step\n## receval\n")
    assert "| `ndcg@10` | 0.5348 |" in summary
    report = json.loads((tmp_path / "receval-report.json").read_text(encoding="utf-8"))
    assert report["gates"]["passed"] is True
    assert "receval: 20 metrics, all 2 gates passed, 0 warnings" in out
    assert "::error" not in out

    failing = tmp_path / "failing.yaml"
    text = QUICKSTART.read_text(encoding="utf-8").replace("{min: 0.4}", "{min: 0.9}")
    failing.write_text(
        text.replace("../sample_data/", f"{ROOT / 'sample_data'}/"), encoding="utf-8"
    )
    code, out, _, outputs, summary = run_step(tmp_path, "run", {"config": "failing.yaml"})
    assert code == 1
    assert outputs["verdict"] == "failed"
    assert "::error title=receval gate failed%3A ndcg@10 " in out
    assert "::ndcg@10 = 0.534752, required >= 0.9: FAILED" in out
    assert "| `ndcg@10` | 0.5348 |" in summary
    suite = ElementTree.parse(tmp_path / "receval-junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")

    code, out, err, outputs, summary = run_step(tmp_path, "run", {"config": "missing.yaml"})
    assert code == 2
    assert outputs == {"exit-code": "2", "verdict": "error", "report": "", "junit": ""}
    assert "::error title=receval exited 2::error: missing.yaml" in out
    assert "error: missing.yaml" in err
    assert "### receval exited 2 (bad usage, config or input)" in summary
    assert not (tmp_path / "receval-report.json").exists()  # the passing run's, removed


@pytest.mark.slow  # a new virtual environment with pip in it
def test_a_package_pip_cannot_install_is_exit_2(tmp_path: Path) -> None:
    """The install step makes the environment, and pip refuses a folder that is no Python
    project: exit 2 (not 1, a gate's) with an annotation that says so, no `receval` output.
    (CI runs the step that installs a wheel: .ci/action_from_wheel.)"""
    (tmp_path / "empty").mkdir()
    code, out, _, outputs, _ = run_step(tmp_path, "install", {"package": "empty"})
    assert code == 2
    assert (
        f"::error title=receval action::pip could not install {tmp_path / 'empty'} (exit 1" in out
    )
    assert outputs == {"exit-code": "2", "verdict": "error"}
    assert (tmp_path / "receval-venv").is_dir()
