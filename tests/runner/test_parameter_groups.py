"""Parameter groups in YAML (the SDK's `@dsl.group`): a component's dotted input names
(`opt.lr`, used as `${{inputs.opt.lr}}`), a pipeline's dotted inputs bound to them
(`${{parent.inputs.train.lr}}`), and an inline step's own dotted inputs. The values reach the
commands of a real run."""

from __future__ import annotations

import textwrap
from pathlib import Path

from runner import jobs
from runner.workspace import Workspace


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_group_members_reach_the_commands_of_a_pipeline(tmp_path: Path) -> None:
    write(tmp_path, "src/echo.py", """\
        import pathlib, sys
        pathlib.Path(sys.argv[1], "args.txt").write_text(" ".join(sys.argv[2:]))
        """)
    write(tmp_path, "train.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json
        name: train_group
        type: command
        version: "1"
        code: ./src
        command: >-
          python echo.py ${{outputs.out}} --lr ${{inputs.opt.lr}} --epochs ${{inputs.opt.epochs}}
          $[[--seed ${{inputs.opt.seed}}]]
        environment: {image: python:3.11-slim}
        inputs:
          opt.lr: {type: number, default: 0.1}
          opt.epochs: {type: integer, default: 2}
          opt.seed: {type: integer, optional: true}
        outputs:
          out: {type: uri_folder}
        """)
    spec = write(tmp_path, "pipeline.yml", """\
        $schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
        type: pipeline
        inputs:
          train.lr: 0.5
        jobs:
          train:
            type: command
            component: ./train.yml
            inputs:
              opt.lr: ${{parent.inputs.train.lr}}
          inline:
            type: command
            code: ./src
            command: python echo.py ${{outputs.out}} --x ${{inputs.g.x}}
            environment: {image: python:3.11-slim}
            inputs:
              g.x: 7
            outputs:
              out: {type: uri_folder}
        """)
    workspace = Workspace.locate(tmp_path / ".amllab")
    name = jobs.submit(spec, workspace)
    jobs.wait(workspace, name, timeout=240)
    shown = jobs.show(workspace, name)
    assert shown["status"] == "Completed", shown
    steps = shown["jobs"]
    # The bound member, the member left to its default, the optional member's block dropped.
    assert (Path(steps["train"]["outputs"]["out"]) / "args.txt").read_text() == "--lr 0.5 --epochs 2"
    assert (Path(steps["inline"]["outputs"]["out"]) / "args.txt").read_text() == "--x 7"
