"""``aml-run``: the ``az ml`` verbs a learner needs, against a local workspace.

    aml-run job create --file job.yml [--name N] [--set inputs.lr=0.1 ...] [--stream]
                       [--nodes N --node-rank K --rdzv-endpoint HOST:PORT] [--preempt-after S[,S...]]
    aml-run job stream|show|cancel NAME       aml-run job list [--parent-job-name SWEEP|PIPELINE]
    aml-run job show PIPELINE --node STEP [--why]   a pipeline's step, and why it ran or was reused
    aml-run job plot SWEEP [--file sweep.png]
    aml-run job download NAME [--output-name X] [--download-path D] [--all]
    aml-run data|environment|component create --file F       (data also: --name --version --path --type)
    aml-run compute create --name cpu-cluster [--max-instances K] [--type cpu|gpu|ray [--address HOST:PORT]]
    aml-run data|environment|component|compute list|show
    aml-run data map --uri-prefix URI --path DIR | --list    read remote URIs from a local copy
    aml-run schedule create --file schedule.yml | list | show NAME [--next N]
    aml-run schedule enable|disable|trigger|delete NAME
    aml-run scheduler [--once]                fire due schedules until Ctrl-C
    aml-run scenario list | show NAME | run NAME [--workspace DIR]   the labs: read one, run and check it
    aml-run notebook PATH.ipynb [--set-sweep KEY=VALUE] [--set-input NAME=VALUE] [--output FILE]
    aml-run script PATH.py [ARGS...]          an SDK v2 notebook or script, unchanged, against the workspace

Every verb takes ``-o json|yaml|table`` (table by default) and ``--workspace DIR``. Exit codes:
0 success, 1 a job that did not complete or a spec with lint errors, 2 a usage error (unknown
job or asset, missing file). Errors are one line (lint errors: the diagnostics), never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from validator import __version__

OUTPUTS = ("table", "json", "yaml")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", choices=OUTPUTS, default="table", help="output format (default: table)")
    parser.add_argument("--workspace", "-w", metavar="DIR",
                        help="the workspace folder (default: $AMLLAB_WORKSPACE, the nearest .amllab/ "
                             "above the current directory, else .amllab/ beside the spec)")


def _name_arguments(parser: argparse.ArgumentParser, what: str = "job") -> None:
    """A job or schedule named as az names it: positional NAME or -n/--name NAME."""
    parser.add_argument("name", nargs="?", metavar="NAME", help=f"the {what}'s name (or -n/--name NAME)")
    parser.add_argument("--name", "-n", dest="name_option", metavar="NAME", help=f"the {what}'s name, as az takes it")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aml-run", description="Run Azure ML v2 job specs on this machine, "
                                     "with the service's semantics and MLflow tracking.")
    parser.add_argument("--version", action="version", version=f"aml-run {__version__}",
                        help="print the version and exit")
    groups = parser.add_subparsers(dest="group", metavar="{job,data,environment,component,compute,schedule,scheduler,"
                                   "scenario,notebook,script}")
    groups.required = True

    job = groups.add_parser("job", help="submit and follow jobs").add_subparsers(dest="verb", metavar="VERB")
    job.required = True
    create = job.add_parser("create", help="validate and submit a job spec")
    create.add_argument("--file", "-f", required=True, metavar="FILE", help="the job spec (YAML) to lint and run")
    create.add_argument("--name", "-n", help="the job's name (default: the spec's name, else a generated one)")
    create.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a field, as az does: --set inputs.lr=0.1 (repeatable)")
    create.add_argument("--ignore", metavar="CODES",
                        help="lint codes or prefixes not to check, comma-separated (AML415,AML6), as aml-lint "
                        "--ignore; adds to [tool.amllab.lint] ignore in pyproject.toml, which applies too")
    create.add_argument("--strict", action="store_true",
                        help="refuse the spec on any lint error; by default a spec whose every error is one "
                        "azure-ai-ml sends on to the service is submitted, as az ml job create does, with the "
                        "errors printed")
    create.add_argument("--stream", action="store_true",
                        help="follow the log and exit with the job's outcome; Ctrl-C cancels the job "
                        "(without it: print the job's name and return at once; the job runs on)")
    share = create.add_argument_group("one node of a job across machines (pytorch)")
    share.add_argument("--nodes", type=int, metavar="N", help="how many machines run the job "
                       "(= resources.instance_count); every machine runs this command with its own --node-rank")
    share.add_argument("--node-rank", type=int, metavar="K", help="this machine's node, 0..N-1 (node 0 "
                       "hosts the rendezvous)")
    share.add_argument("--rdzv-endpoint", metavar="HOST:PORT", help="node 0's address and a free port, "
                       "where the nodes meet")
    create.add_argument("--preempt-after", metavar="SECONDS[,SECONDS...]", type=_seconds_list, default=(),
                        help="a spot job (queue_settings.job_tier: spot) loses its node after SECONDS of "
                        "running and is re-queued with its ./outputs; a list preempts it once per entry")
    for verb, text in (("stream", ("follow a job's log until it ends (a sweep on a terminal: its live trials "
                                   "table); Ctrl-C stops following, and the job goes on")),
                       ("show", "a job's details"),
                       ("cancel", "stop a job and every process it started (a trial: the sweep goes on)"),
                       ("plot", "a sweep's picture: every trial's primary-metric curve (PNG)")):
        sub = job.add_parser(verb, help=text)
        _name_arguments(sub)
        if verb == "plot":
            sub.add_argument("--output-file", "--file", "-f", dest="plot_file", metavar="PNG",
                             help="where to write the picture (default: NAME.png here)")
        if verb == "show":
            sub.add_argument("--node", metavar="STEP", help="a pipeline's step: show that step's job")
            sub.add_argument("--why", action="store_true",
                             help="with --node: why the step ran or was reused, field by field")
        _common(sub)
    _common(create)
    listing = job.add_parser("list", help="the workspace's jobs")
    listing.add_argument("--parent-job-name", "-p", metavar="PARENT",
                         help="list the child jobs of this sweep (its trials) or pipeline (its steps)")
    _common(listing)
    download = job.add_parser("download", help="copy a job's outputs and logs")
    _name_arguments(download)
    download.add_argument("--output-name", metavar="NAME", help="one named output (default: the default "
                          "artifacts: ./outputs and the logs; a sweep's are its best trial's)")
    download.add_argument("--download-path", "-p", default=".", metavar="DIR",
                          help="the folder to download into")
    download.add_argument("--all", action="store_true", help="the default artifacts and every named output")
    _common(download)

    for group, title, one in (("data", "data assets", "a data asset"),
                              ("environment", "environments", "an environment"),
                              ("component", "components", "a component"), ("compute", "computes", "a compute")):
        verbs = groups.add_parser(group, help=title).add_subparsers(dest="verb", metavar="VERB")
        verbs.required = True
        create = verbs.add_parser("create", help=f"register {one}")
        if group == "compute":
            create.add_argument("--name", "-n", required=True, help="the compute's name (azureml:NAME in specs)")
            create.add_argument("--max-instances", type=int, default=4, metavar="K",
                                help="jobs or nodes at once on it; the rest wait in Queued")
            create.add_argument("--type", choices=("cpu", "gpu", "ray"), default="cpu",
                                help="cpu and gpu are labels (jobs run on this machine); ray: a Ray cluster, "
                                     "where jobs, trials, steps and nodes run (needs --address)")
            create.add_argument("--address", metavar="HOST:PORT",
                                help="a ray compute's head node, as `ray start --head` prints it")
            create.add_argument("--size", metavar="VM_SIZE",
                                help="a VM size, recorded for the record (e.g. Standard_DS3_v2)")
        else:
            create.add_argument("--file", "-f", required=group == "component",
                                help=f"the {group}'s YAML" + ("" if group == "component" else
                                                             ", or the options below")
                                + (" (an environment spec, not a conda file: use --conda-file for that)"
                                   if group == "environment" else ""))
            if group != "component":
                create.add_argument("--name", "-n", help=f"the {group}'s name")
                create.add_argument("--version", "-v", help="its version (versions never change once registered)")
            if group == "data":
                create.add_argument("--path", "-p", help="a local file or folder (remote paths are refused)")
                create.add_argument("--type", "-t", choices=("uri_file", "uri_folder", "mltable"),
                                    help="the data asset's type")
                create.add_argument("--description", help="a description, kept with the asset")
            if group == "environment":
                create.add_argument("--python", metavar="PATH",
                                    help="a Python executable or virtual environment folder to run this "
                                    "environment's jobs with, as it is (default: a virtual environment "
                                    "built from the conda file over aml-run's interpreter)")
                create.add_argument("--conda-file", metavar="FILE",
                                    help="a conda file: its pip list (and the conda packages PyPI has) "
                                    "is installed into the environment's virtual environment")
                create.add_argument("--image", help="a Docker image (recorded, never pulled)")
        _common(create)
        _common(verbs.add_parser("list", help=f"list {title}"))
        show = verbs.add_parser("show", help=f"one of the {title}")
        show.add_argument("--name", "-n", required=True, help=f"the {group}'s name")
        if group != "compute":
            show.add_argument("--version", "-v", help="one version (default: the latest)")
            show.add_argument("--label", "-l", help="latest: the newest version")
        _common(show)
        if group == "data":
            mapping = verbs.add_parser("map", help="read a remote URI prefix (https, wasbs, abfss, azureml://datastores) "
                                       "from a local folder, without editing the spec")
            mapping.add_argument("--uri-prefix", metavar="URI", help="the start of the URIs to map, e.g. "
                                 "https://azuremlexamples.blob.core.windows.net/datasets/")
            mapping.add_argument("--path", "-p", metavar="DIR", help="the local folder that holds a copy of what is "
                                 "under the prefix (the rest of each URI is the path inside it)")
            mapping.add_argument("--list", action="store_true", help="show the workspace's maps")
            mapping.add_argument("--remove", action="store_true", help="remove the map of --uri-prefix")
            _common(mapping)
    _schedule_parsers(groups)
    _scenario_parsers(groups)
    _sdk_parsers(groups)
    return parser


def _sdk_parsers(groups: Any) -> None:
    notebook = groups.add_parser(
        "notebook", help="run an azure-ai-ml (SDK v2) notebook as it is: MLClient answers from the workspace",
        description="Run a Jupyter notebook that uses azure-ai-ml, unchanged, in its folder: MLClient and "
        "azure.identity's credentials are replaced by aml-run's offline client, every job it submits becomes "
        "the CLI YAML it would be (written beside the run), linted and run here. Waits for its jobs; exit 0 "
        "when it ran to its end and every job completed, 3 when it stopped at a verb that needs Azure's cloud "
        "after every job completed, 1 otherwise.")
    notebook.add_argument("path", metavar="PATH.ipynb", type=Path, help="the notebook")
    notebook.add_argument("--output", metavar="FILE", type=Path,
                          help="where to save the executed notebook with its outputs "
                          "(default: WORKSPACE/sdk/notebooks/NAME.ipynb; the notebook itself is never written)")
    notebook.add_argument("--timeout", type=float, metavar="SECONDS",
                          help="stop a cell that runs longer than this (default: no limit)")
    script = groups.add_parser(
        "script", help="run an azure-ai-ml (SDK v2) Python script as it is, against the workspace",
        description="Run a Python script that uses azure-ai-ml, unchanged, in the current folder, with "
        "MLClient and the credentials replaced as for `aml-run notebook`; the same exit statuses.")
    script.add_argument("path", metavar="PATH.py", type=Path, help="the script")
    script.add_argument("arguments", nargs=argparse.REMAINDER, metavar="ARGS",
                        help="the script's own arguments (after PATH.py; aml-run's options go before it)")
    for sub in (notebook, script):
        sub.add_argument("--set-sweep", dest="set_sweep", action="append", default=[], metavar="KEY=VALUE",
                         help="for laptop scale: set KEY of every sweep it submits (limits.max_total_trials=4), "
                         "printed for each job it changes (repeatable)")
        sub.add_argument("--set-input", dest="set_input", action="append", default=[], metavar="NAME=VALUE",
                         help="set the literal input NAME of every job and step it submits (epochs=1), printed "
                         "for each job it changes (repeatable)")
        sub.add_argument("--ignore", metavar="CODES",
                         help="lint codes or prefixes not to check in what it submits, comma-separated, as "
                         "job create --ignore")
        sub.add_argument("--workspace", "-w", metavar="DIR",
                         help="the workspace folder (default: $AMLLAB_WORKSPACE, the nearest .amllab/ above the "
                         "current directory, else .amllab/ beside PATH)")


def _scenario_parsers(groups: Any) -> None:
    verbs = groups.add_parser("scenario", help="the labs: run one and check what it must show").add_subparsers(
        dest="verb", metavar="VERB")
    verbs.required = True
    listing = verbs.add_parser("list", help="the labs, with the exam question each answers")
    listing.add_argument("-o", "--output", choices=OUTPUTS, default="table", help="output format (default: table)")
    show = verbs.add_parser("show", help="what a lab teaches and the commands it runs, without running it")
    show.add_argument("name", help="a lab's name (scenario list) or its folder")
    show.add_argument("-o", "--output", choices=OUTPUTS, default="table", help="output format (default: text)")
    copy = verbs.add_parser("copy", help="copy a lab into a folder of yours, to run and change it there "
                            "(how an installed amllab runs its labs)")
    copy.add_argument("name", help="a lab's name (scenario list)")
    copy.add_argument("destination", nargs="?", type=Path,
                      help="the folder to copy it into (default: ./amllab-labs); the lab lands in DESTINATION/NAME")
    run = verbs.add_parser("run", help="register a lab's assets, run its steps, check its expectations, "
                           "and say what to notice")
    run.add_argument("name", help="a lab's name (scenario list) or its folder")
    run.add_argument("--workspace", "-w", metavar="DIR", help="an empty or new folder for the lab's workspace "
                     "(default: the lab's own .amllab/, cleared first)")
    run.add_argument("-o", "--output", choices=OUTPUTS, default="table",
                     help="table: the steps' output, then the report; json/yaml: the report only")


def _schedule_parsers(groups: Any) -> None:
    verbs = groups.add_parser("schedule", help="schedules: jobs on a timer").add_subparsers(
        dest="verb", metavar="VERB")
    verbs.required = True
    create = verbs.add_parser("create", help="validate and register a schedule (enabled)")
    create.add_argument("--file", "-f", required=True, help="the schedule's YAML, linted before it is registered")
    _common(create)
    _common(verbs.add_parser("list", help="the workspace's schedules, with their next fire time"))
    for verb, text in (("show", "a schedule; --next N adds its next fire times (its zone and UTC)"),
                       ("enable", "let the scheduler fire it again (missed times are not owed)"),
                       ("disable", "stop firing it"), ("trigger", "run its job now"),
                       ("delete", "remove it (the jobs it created stay)")):
        sub = verbs.add_parser(verb, help=text)
        _name_arguments(sub, "schedule")
        if verb == "show":
            sub.add_argument("--next", type=int, default=0, metavar="N",
                             help="list the next N fire times, in its time zone and in UTC")
        _common(sub)
    scheduler = groups.add_parser("scheduler", help="fire due schedules, in the foreground (Ctrl-C stops it)")
    scheduler.add_argument("--once", action="store_true",
                           help="one pass (fire what is due, a missed backlog once) and exit")
    scheduler.add_argument("--workspace", "-w", metavar="DIR",
                           help="the workspace folder (default: $AMLLAB_WORKSPACE, else the nearest .amllab/)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from validator.errors import AmllabError
    from validator.spec import SpecError

    try:
        return _dispatch(args)
    except SpecError as error:
        sys.stderr.write(error.render(color=_color()))
        sys.stderr.write("aml-run: the spec has lint errors, so it was not submitted:\n" + error.refusal())
        return 1
    except AmllabError as error:
        sys.stderr.write(f"aml-run: error: {error}\n")
        return 2
    except OSError as error:  # a path the system refuses: one line, not a traceback
        where = f" ({error.filename})" if error.filename and str(error.filename) not in str(error.strerror) else ""
        sys.stderr.write(f"aml-run: error: {error.strerror or error}{where}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr = open(os.devnull, "w")
        return 0


def _color() -> bool:
    return sys.stderr.isatty() and not os.environ.get("NO_COLOR")


def _seconds_list(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not seconds, or a comma list of them (5 or 5,12)") from None
    if not values or any(value <= 0 for value in values):
        raise argparse.ArgumentTypeError(f"{text!r}: every preemption needs seconds greater than 0")
    return values


def _multi_node(args: argparse.Namespace) -> Any:
    from validator.errors import UsageError

    given = [args.nodes is not None, args.node_rank is not None, args.rdzv_endpoint is not None]
    if not any(given):
        return None
    if not all(given):
        raise UsageError("a job across machines needs all three: --nodes N --node-rank K --rdzv-endpoint HOST:PORT")
    from .distributed import MultiNode

    return MultiNode(args.nodes, args.node_rank, args.rdzv_endpoint)


def _name(args: argparse.Namespace) -> str:
    from validator.errors import UsageError

    name = args.name or args.name_option
    if not name:
        raise UsageError(f"job {args.verb} needs a job name (aml-run job list shows them)")
    return name


def _dispatch(args: argparse.Namespace) -> int:
    from validator.errors import UsageError

    from . import assets, jobs
    from .workspace import Workspace

    if args.group in ("schedule", "scheduler"):
        return _schedule(args)
    if args.group == "scenario":
        return _scenario(args)
    if args.group in ("notebook", "script"):
        return _sdk(args)
    if args.group == "job":
        if args.verb == "create":
            workspace = Workspace.locate(args.workspace, Path(args.file), create=False, must_exist=False)
            ignore = [code.strip().upper() for code in (args.ignore or "").split(",") if code.strip()]
            name = jobs.submit(args.file, workspace, args.name, args.overrides, warn=sys.stderr,
                               multi_node=_multi_node(args), preempt_after=args.preempt_after, ignore=ignore,
                               strict=args.strict)
            if args.stream:
                return _follow(workspace, name, cancel_on_interrupt=True)
            _print(jobs.show(workspace, name), args.output, ("name", "type", "status", "experiment_name", "run_dir"))
            return 0
        if args.verb == "list":
            if args.parent_job_name:
                workspace = Workspace.for_job(args.parent_job_name, args.workspace)
            else:
                workspace = Workspace.locate(args.workspace, create=False)
            _print(jobs.list_jobs(workspace, args.parent_job_name), args.output,
                   ("name", "type", "status", "experiment_name", "display_name", "creation_time", "duration_s"))
            return 0
        name = _name(args)
        workspace = Workspace.for_job(name, args.workspace)
        if args.verb == "show":
            if args.why and not args.node:
                raise UsageError("--why explains one step's reuse: add --node STEP (job show NAME lists the steps)")
            if args.node:
                from .pipeline import node_job_name, why

                step_job = node_job_name(workspace, name, args.node)
                if args.why:
                    sys.stdout.write(why(workspace, workspace.run_dir(name), args.node))
                    return 0
                name = step_job
            shown = jobs.show(workspace, name)
            _print(shown, args.output, ("name", "type", "status", "experiment_name", "start_time", "end_time",
                                        "metrics", "log_path"))
            if args.output == "table" and shown.get("jobs"):
                sys.stdout.write("\n" + table([{"step": step, **node} for step, node in shown["jobs"].items()],
                                              ("step", "status", "reused", "reused_from", "duration", "metrics")))
            if args.output == "table" and args.node and shown.get("error"):
                # What the execution summary sent the user here to read.
                sys.stdout.write(f"\nError: {shown['error']['code']}: {shown['error']['message']}\n")
            return 0
        if args.verb == "stream":
            return _follow(workspace, name, cancel_on_interrupt=False)
        if args.verb == "plot":
            from .sweep.view import plot

            written = plot(workspace, jobs.show(workspace, name), Path(args.plot_file or f"{name}.png"))
            _print({"name": name, "plot": str(written)}, args.output, ("name", "plot"))
            return 0
        if args.verb == "cancel":
            jobs.cancel(workspace, name)
            _print(jobs.show(workspace, name), args.output, ("name", "status", "error"))
            return 0
        if args.verb == "download":
            written = jobs.download(workspace, name, Path(args.download_path), args.output_name, args.all)
            _print([{"downloaded": str(path)} for path in written], args.output, ("downloaded",))
            return 0
    workspace = Workspace.locate(args.workspace, None, create=False, must_exist=args.verb not in ("create", "map"))
    if args.verb == "map":
        return _data_map(args, workspace)
    if args.verb == "list":
        rows = assets.list_assets(workspace, args.group)
        _print(rows, args.output, ("name", "version", "type", "path", "max_instances") if rows else ("name",))
        return 0
    if args.verb == "show":
        shown = assets.show_asset(workspace, args.group, args.name, getattr(args, "version", None),
                                  getattr(args, "label", None))
        _print(shown, args.output, tuple(shown))
        return 0
    if args.group == "data":
        entry = assets.create_data(workspace, args.file, args.name, args.version, args.path, args.type,
                                   args.description)
    elif args.group == "environment":
        entry = assets.create_environment(workspace, args.file, args.name, args.version, args.python,
                                          args.conda_file, args.image)
    elif args.group == "component":
        entry = assets.create_component(workspace, args.file)
    else:
        entry = assets.create_compute(workspace, args.name, args.max_instances, args.type, args.size, args.address)
    _print(entry, args.output, tuple(entry))
    return 0


def _data_map(args: argparse.Namespace, workspace: Any) -> int:
    from validator.errors import UsageError

    from . import datamap

    if args.list:
        if args.uri_prefix or args.path or args.remove:
            raise UsageError("--list takes no other option: `aml-run data map --list`")
        _print(datamap.rows(workspace), args.output, ("uri_prefix", "path"))
        return 0
    if not args.uri_prefix:
        raise UsageError("give --uri-prefix URI with --path DIR (or --remove), or --list")
    if args.remove:
        if args.path:
            raise UsageError("--remove takes --uri-prefix only")
        _print(datamap.remove(workspace, args.uri_prefix), args.output, ("uri_prefix",))
        return 0
    if not args.path:
        raise UsageError(f"give the local copy's folder: `aml-run data map --uri-prefix {args.uri_prefix} --path DIR`")
    _print(datamap.add(workspace, args.uri_prefix, args.path), args.output, ("uri_prefix", "path"))
    return 0


def _schedule(args: argparse.Namespace) -> int:
    from validator.errors import UsageError

    from . import schedules
    from .workspace import Workspace

    if args.group == "scheduler":
        workspace = Workspace.locate(args.workspace, create=False)
        sys.stdout.write(f"[aml-run scheduler] watching the schedules of {workspace.folder} (Ctrl-C stops)\n")
        sys.stdout.flush()
        schedules.run_scheduler(workspace, out=sys.stdout, once=args.once)
        return 0
    columns = ("name", "is_enabled", "trigger", "time_zone", "next_fire", "last_fired", "jobs")
    if args.verb == "create":
        workspace = Workspace.locate(args.workspace, Path(args.file), create=False, must_exist=False)
        _print(schedules.create(workspace, args.file, warn=sys.stderr), args.output, columns)
        return 0
    workspace = Workspace.locate(args.workspace, create=False)
    if args.verb == "list":
        _print(schedules.list_schedules(workspace), args.output, columns)
        return 0
    name = args.name or args.name_option
    if not name:
        raise UsageError(f"schedule {args.verb} needs a schedule name (aml-run schedule list shows them)")
    if args.verb == "show":
        shown = schedules.show(workspace, name, next=args.next)
        if args.output == "table" and args.next:
            _print(shown, args.output, ("name", "is_enabled", "trigger", "time_zone", "last_fired"))
            sys.stdout.write("\n" + table([{"next_fire": row["time"], "utc": row["utc"]}
                                           for row in shown["next_fire_times"]], ("next_fire", "utc")))
        else:
            _print(shown, args.output, ("name", "is_enabled", "trigger", "time_zone", "start_time", "end_time",
                                        "last_fired", "jobs"))
        return 0
    if args.verb == "trigger":
        job = schedules.trigger(workspace, name, warn=sys.stderr)
        _print({"schedule": name, "job": job}, args.output, ("schedule", "job"))
        return 0
    if args.verb == "delete":
        _print(schedules.delete(workspace, name), args.output, ("name", "deleted", "jobs_kept"))
        return 0
    shown = schedules.enable(workspace, name) if args.verb == "enable" else schedules.disable(workspace, name)
    _print(shown, args.output, ("name", "is_enabled", "trigger", "time_zone"))
    return 0


def _sdk(args: argparse.Namespace) -> int:
    from .sdk import notebook, overrides
    from .workspace import Workspace

    given = [overrides.parse("sweep", text) for text in args.set_sweep]
    given += [overrides.parse("input", text) for text in args.set_input]
    ignore = [code.strip().upper() for code in (args.ignore or "").split(",") if code.strip()]
    workspace = Workspace.locate(args.workspace, args.path, create=True)
    if args.group == "notebook":
        return notebook.run_notebook(args.path, workspace, args.output, given, ignore, args.timeout)
    return notebook.run_script(args.path, list(args.arguments), workspace, given, ignore)


def _scenario(args: argparse.Namespace) -> int:
    from validator.errors import UsageError

    from . import scenarios

    if args.verb == "list":
        _print(list(scenarios.rows()), args.output, ("name", "runs", "title"))
        return 0
    if args.verb == "copy":
        target = scenarios.copy(args.name, args.destination)
        print(f"copied {args.name} to {target}; run it there: cd {target} && aml-run scenario run .")
        return 0
    folder = scenarios.find(args.name)
    if args.verb == "show":
        described = scenarios.describe(folder)
        if args.output == "table":
            scenarios.render_description(described, sys.stdout)
        else:
            _print(described, args.output, ())
        return 0
    if scenarios.installed() and folder.resolve().is_relative_to(scenarios.SCENARIOS_DIR.resolve()):
        raise UsageError(f"the lab {folder.name!r} is the copy installed with amllab, which a run would write "
                         f"into: copy it first (aml-run scenario copy {folder.name}) and run the copy")
    scenarios.load(folder)  # a scenario.yml that cannot run is refused before any workspace is made
    workspace = scenarios.fresh_workspace(folder, args.workspace)
    quiet = args.output != "table"
    result = scenarios.execute(folder, workspace, open(os.devnull, "w") if quiet else sys.stdout)
    result["workspace"] = str(workspace.folder)
    if quiet:
        _print(result, args.output, ())
    else:
        scenarios.render(result, sys.stdout)
    return 0 if result["passed"] else 1


def _follow(workspace: Any, name: str, cancel_on_interrupt: bool) -> int:
    """A job's log until it ends; a job with a live view (a sweep) on a terminal gets that view
    instead, and elsewhere its log followed by its table once."""
    from . import jobs

    live = sys.stdout.isatty() and not os.environ.get("AMLLAB_PLAIN_STREAM")
    return jobs.follow(workspace, name, sys.stdout, cancel_on_interrupt=cancel_on_interrupt, live=live)


def _print(value: Any, output: str, columns: Sequence[str]) -> None:
    if output == "json":
        sys.stdout.write(json.dumps(value, indent=2, default=str) + "\n")
    elif output == "yaml":
        import yaml

        sys.stdout.write(yaml.safe_dump(json.loads(json.dumps(value, default=str)), sort_keys=False,
                                        allow_unicode=True))
    else:
        sys.stdout.write(table(value if isinstance(value, list) else [value], columns))


def table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain aligned table, as ``az -o table`` prints: one header, one line per row."""
    if not rows:
        return "(none)\n"
    columns = [c for c in columns if any(c in row for row in rows)]

    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, dict):
            return ", ".join(f"{k}={_short(v)}" for k, v in value.items())
        if isinstance(value, (list, tuple)):
            return ", ".join(_short(v) for v in value)
        return str(value)

    grid = [[column.replace("_", " ").title() for column in columns]]
    grid += [[cell(row.get(column)) for column in columns] for row in rows]
    widths = [max(len(line[i]) for line in grid) for i in range(len(columns))]
    lines = ["  ".join(value.ljust(width) for value, width in zip(line, widths)).rstrip() for line in grid]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines) + "\n"


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
