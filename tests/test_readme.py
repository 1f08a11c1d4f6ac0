"""Every command of the README's Use section runs as written, and its first examples are configurations a user would
run (review 2, T19: the first example trained at 9% MFU behind a 73.5% pipeline bubble, the Mixtral one did not fit).

The files the README assumes a user has are made here: `my-model.toml` (a catalog model), `my-scenario.toml`,
`big.toml` and `my.toml` (the small test scenario), `poc/*.txt` (the nccl-tests logs of tests/data/nccl) and the
other 63 jobs of the job array whose job 3 and merge the README shows. Two kinds of line are not run: templates
(a block with a shell variable or an [optional] part: the job array the literal lines above it spell out) and what
needs a GPU (a line whose comment says "on the GPU node"). Commands run in-process, in a scratch folder."""

from __future__ import annotations

import glob
import json
import re
import shlex
import shutil

import pytest

from helpers import DATA, REPO, SMALL_SCENARIO, run

README = (REPO / "README.md").read_text(encoding="utf-8")


def _use_section() -> str:
    start = README.index("\n## Use\n")
    return README[start : README.index("\n## ", start + 1)]


def _blocks() -> list[list[tuple[str, str]]]:
    """The `scalefront` lines of each of the section's code blocks as (command, comment), continuations joined."""
    blocks: list[list[str]] = []
    inside = False
    for line in _use_section().splitlines():
        if line.startswith("```"):
            inside = not inside
            if inside:
                blocks.append([])
        elif inside:
            blocks[-1].append(line)
    out = []
    for block in blocks:
        lines = [line.strip() for line in "\n".join(block).replace("\\\n", " ").splitlines()]
        pairs = [line.partition(" #")[::2] for line in lines if line.startswith("scalefront")]
        out.append([(" ".join(command.split()), comment.strip()) for command, comment in pairs])
    return out


def _template(block: list[tuple[str, str]]) -> bool:
    """A block of a template (a shell variable or an [optional] part): its other lines depend on it."""
    return any("$" in command or "[" in command for command, _ in block)


def _commands() -> list[tuple[str, str]]:
    """Every command with its comment; the lines of a template block keep a `$` marker in their comment."""
    return [(c, m if not _template(b) else f"{m} $template") for b in _blocks() for c, m in b]


COMMANDS = _commands()


def _runnable(command: str, comment: str) -> bool:
    return "$template" not in comment and "on the GPU node" not in comment


def test_the_section_is_read():
    # The parse itself: the section's first command, the GPU-only one and the job-array templates are all there.
    assert COMMANDS[0][0].startswith("scalefront eval --model llama3-405b")
    assert any("on the GPU node" in comment for _, comment in COMMANDS)
    assert any("$K" in command for command, _ in COMMANDS)
    assert sum(_runnable(c, m) for c, m in COMMANDS) >= 15


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("readme")
    shutil.copy(DATA / "models" / "llama3-70b.toml", d / "my-model.toml")
    for name in ("my-scenario.toml", "big.toml", "my.toml"):
        (d / name).write_text(SMALL_SCENARIO, encoding="utf-8")
    (d / "poc").mkdir()
    for log in (REPO / "tests" / "data" / "nccl").glob("*.txt"):
        shutil.copy(log, d / "poc" / log.name)
    (d / "data").symlink_to(DATA)  # the README's data/measurements/... paths, from the checkout's root
    return d


def _argv(command: str) -> list[str]:
    """The command's arguments as a shell would pass them (globs expanded in the working folder)."""
    out = []
    for word in shlex.split(command)[1:]:
        out += sorted(glob.glob(word)) or [word] if any(c in word for c in "*?") else [word]
    return out


def test_every_command_runs_as_written(folder, monkeypatch, capsys):
    monkeypatch.chdir(folder)
    for command, comment in COMMANDS:
        if not _runnable(command, comment):
            continue
        if "--shard 3/64" in command:  # the other jobs of the array the README's merge joins
            for k in (k for k in range(1, 65) if k != 3):
                code, _, err = run(["sweep", "big.toml", "--shard", f"{k}/64", "--out", f"part-{k}.parquet"], capsys)
                assert code == 0, (k, err)
        code, _, err = run(_argv(command), capsys)
        assert code == 0, (command, err)
        assert "Traceback" not in err, command


def _metric(text: str, label: str) -> float:
    match = re.search(rf"{label}\s+([\d.]+)%", text)
    assert match, (label, text)
    return float(match.group(1)) / 100


def test_the_first_examples_are_configurations_a_user_would_run(capsys):
    # The first: Llama 3 405B on 16,384 H100s as Meta laid it out (41% MFU published, Llama 3 report Table 4): a
    # planning tool's first example must not be a layout that idles most of the step.
    first = next(c for c, _ in COMMANDS if "llama3-405b" in c)
    code, out, err = run(_argv(first), capsys)
    assert code == 0, err
    assert "DOES NOT FIT" not in out
    assert _metric(out, "MFU") > 0.30
    assert _metric(out, r"pipeline bubble\s+[\d.]+ m?s") < 0.25
    # The Mixtral one fits in memory, and says so in its JSON.
    mixtral = next(c for c, _ in COMMANDS if "mixtral" in c)
    code, out, err = run(_argv(mixtral), capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["feasible"] is True and "reason" not in result


def test_an_infeasible_result_says_why_in_json_too(capsys):
    # The README's former Mixtral example (tp 2) needs more memory than an H100 has: the JSON carries the table's
    # reason, not only "feasible": false.
    code, out, err = run(
        ["eval", "--model", "mixtral-8x7b", "--gpus", "256", "--tp", "2", "--ep", "8", "--json"], capsys
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["feasible"] is False
    assert result["reason"].startswith("out of memory: needs ")
    assert "h100-sxm has 80 GB" in result["reason"]
