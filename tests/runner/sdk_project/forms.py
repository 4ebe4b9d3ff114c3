"""One function per SDK v2 form a notebook builds a job with, each returning the object it would
submit. The patterns are those of Microsoft's SDK v2 job notebooks (command, distribution, sweep,
command-step and component pipelines, nested pipelines, schedules), written small, on this
folder's own code and data."""



from datetime import datetime
from pathlib import Path

from azure.ai.ml import Input, MpiDistribution, Output, PyTorchDistribution, TensorFlowDistribution, command, dsl, \
    load_component
from azure.ai.ml.entities import (BuildContext, CommandComponent, CronTrigger, Environment, JobSchedule, JobService,
                                  RecurrencePattern, RecurrenceTrigger, ResourceConfiguration)
from azure.ai.ml.sweep import BanditPolicy, Choice, LogUniform, MedianStoppingPolicy, QUniform, Randint, Uniform

__all__ = ["Choice", "QUniform", "dsl"]

HERE = Path(__file__).resolve().parent
ENVIRONMENT = Environment(image="python:3.11-slim")
REMOTE_CSV = "https://azuremlexamples.blob.core.windows.net/datasets/iris.csv"


def train_command(**overrides):
    settings = dict(
        code=str(HERE / "src"),
        command="python train.py --data ${{inputs.data}} --lr ${{inputs.lr}} --epochs ${{inputs.epochs}} "
                "--flag ${{inputs.flag}}",
        inputs={"data": Input(type="uri_file", path=str(HERE / "data" / "rows.csv")), "lr": 0.1, "epochs": 2,
                "flag": False},
        environment=ENVIRONMENT,
        compute="cpu-cluster",
        display_name="sdk-train",
        experiment_name="sdk-forms",
    )
    settings.update(overrides)
    return command(**settings)


def command_job():
    """A command job: literals of every type (False among them), a local and a remote input, an
    output, environment variables, tags."""
    return command(
        code=str(HERE / "src"),
        command="python train.py --data ${{inputs.data}} --lr ${{inputs.lr}} --epochs ${{inputs.epochs}} "
                "--flag ${{inputs.flag}} --model ${{outputs.model}} # ${{inputs.remote}} ${{inputs.note}}",
        inputs={"data": Input(type="uri_file", path="./data/rows.csv"), "lr": 0.05, "epochs": 3, "flag": False,
                "note": "a b", "remote": Input(type="uri_file", path=REMOTE_CSV, mode="download")},
        outputs={"model": Output(type="uri_folder", mode="rw_mount")},
        environment="AzureML-sklearn-1.5@latest",
        environment_variables={"EXAMPLE": "1"},
        compute="cpu-cluster",
        display_name="sdk-command",
        experiment_name="sdk-forms",
        tags={"form": "command"},
    )


def command_pytorch():
    """A distributed command job: torch's launcher, two processes on each of two nodes."""
    job = train_command(instance_count=2,
                        distribution={"type": "PyTorch", "process_count_per_instance": 2})
    job.resources = ResourceConfiguration(instance_count=2, instance_type="Standard_DS3_v2")
    return job


def command_tensorflow():
    job = train_command(instance_count=2)
    job.distribution = TensorFlowDistribution(worker_count=2)
    return job


def command_mpi():
    return train_command(instance_count=1, distribution=MpiDistribution(process_count_per_instance=2))


def sweep_job():
    """A sweep: the trial's lr and epochs searched, data and flag its unswept inputs, median
    stopping, limits set afterwards (the lightgbm notebook's shape)."""
    job = train_command()(lr=Uniform(min_value=0.01, max_value=0.5), epochs=Choice(values=[2, 3]))
    sweep = job.sweep(compute="cpu-cluster", sampling_algorithm="random", primary_metric="acc", goal="Maximize")
    sweep.set_limits(max_total_trials=20, max_concurrent_trials=4, timeout=7200)
    sweep.early_termination = MedianStoppingPolicy(delay_evaluation=5, evaluation_interval=2)
    sweep.display_name = "sdk-sweep"
    sweep.experiment_name = "sdk-forms"
    return sweep


def sweep_distributions():
    """Every kind of search-space expression, grid-free random sampling with a seed, a bandit."""
    job = train_command()(lr=LogUniform(min_value=-6, max_value=-1), epochs=Randint(upper=4),
                          flag=Choice(["yes", "no"]))
    sweep = job.sweep(compute="cpu-cluster", sampling_algorithm="random", primary_metric="acc", goal="minimize",
                      max_total_trials=8, max_concurrent_trials=2,
                      early_termination_policy=BanditPolicy(slack_factor=0.15, evaluation_interval=1,
                                                            delay_evaluation=10))
    return sweep


def sweep_grid():
    job = train_command()(epochs=Choice([1, 2, 3]), lr=Choice([0.1, 0.2]))
    sweep = job.sweep(compute="cpu-cluster", sampling_algorithm="grid", primary_metric="acc", goal="maximize")
    sweep.set_limits(max_total_trials=6)
    return sweep


def pipeline_command_steps():
    """Command nodes built in Python, an output path with the ${{name}} macro, a step's output
    mode, services, a literal False on a step (the non-python-components notebook's shape)."""
    custom_path = "azureml://datastores/workspaceblobstore/paths/custom_path/${{name}}/"
    prepare = command(
        name="prepare", display_name="Prepare", command="cp ${{inputs.source}} ${{outputs.folder}}/rows.csv",
        environment=ENVIRONMENT, inputs=dict(source=Input(type="uri_file")),
        outputs=dict(folder=Output(type="uri_folder", mode="rw_mount", path=custom_path)),
    )
    train = command(
        name="train", display_name="Train", code=str(HERE / "src"), environment=ENVIRONMENT,
        command="python train.py --data ${{inputs.data}} --flag ${{inputs.flag}} --model ${{outputs.model}}",
        inputs=dict(data=Input(type="uri_folder"), flag=True), outputs=dict(model=Output(type="uri_folder")),
        services={"lab": JobService(type="jupyter_lab")},
    )

    @dsl.pipeline(tags={"owner": "sdk"}, description="command steps")
    def command_steps(source: Input):
        prepared = prepare(source=source)
        trained = train(data=prepared.outputs.folder, flag=False)
        trained.outputs.model.mode = "upload"
        return {"model": trained.outputs.model}

    job = command_steps(source=Input(type="uri_file", path=str(HERE / "data" / "rows.csv")))
    job.outputs.model = Output(type="uri_folder", mode="rw_mount", path=custom_path)
    job.settings.default_compute = "cpu-cluster"
    return job


def pipeline_components():
    """Components from YAML: a remote and a local input, step compute, outputs promoted (the
    components-from-YAML notebook's shape)."""
    train = load_component(source=HERE / "components" / "train.yml")
    score = load_component(source=HERE / "components" / "score.yml")

    @dsl.pipeline()
    def train_and_score(training_data, learning_rate=0.1, flag=True):
        trained = train(data=training_data, lr=learning_rate, epochs=3, flag=flag)
        scored = score(model=trained.outputs.model)
        scored.compute = "gpu-cluster"
        scored.outputs.report.mode = "upload"
        return {"model": trained.outputs.model, "report": scored.outputs.report}

    job = train_and_score(training_data=Input(type="uri_folder", path="./data/"), learning_rate=0.2, flag=False)
    job.settings.default_compute = "cpu-cluster"
    job.display_name = "sdk-components"
    return job


def pipeline_sweep_step():
    """A sweep step (the hyperparameter-sweep pipeline notebook's shape): a remote input, the
    unswept literals (False among them) on the trial, the sweep's output feeding a step."""
    train = load_component(source=HERE / "components" / "train.yml")
    score = load_component(source=HERE / "components" / "score.yml")

    @dsl.pipeline()
    def tuned():
        trained = train(data=Input(type="uri_folder", path=str(HERE / "data")), lr=Uniform(0.01, 0.5),
                        epochs=Choice([2, 3]), flag=False)
        sweep_step = trained.sweep(primary_metric="acc", goal="maximize", sampling_algorithm="random",
                                   compute="cpu-cluster")
        sweep_step.set_limits(max_total_trials=20, max_concurrent_trials=10, timeout=7200)
        score(model=sweep_step.outputs.model)

    job = tuned()
    job.settings.default_compute = "cpu-cluster"
    return job


def pipeline_nested():
    """A pipeline component inside a pipeline, its compute an input of the outer pipeline (the
    pipeline-component notebooks' shape)."""
    train = load_component(source=HERE / "components" / "train.yml")
    score = load_component(source=HERE / "components" / "score.yml")

    @dsl.pipeline()
    def train_and_score(training_data: Input, learning_rate: float, train_compute: str, epochs: int = 2):
        trained = train(data=training_data, lr=learning_rate, epochs=epochs)
        trained.compute = train_compute
        scored = score(model=trained.outputs.model)
        return {"model": trained.outputs.model, "report": scored.outputs.report}

    @dsl.pipeline()
    def two_models(training_data, compute_train_node, rate1=0.1, rate2=0.01):
        first = train_and_score(training_data=training_data, learning_rate=rate1, train_compute=compute_train_node)
        second = train_and_score(training_data=training_data, learning_rate=rate2, train_compute=compute_train_node)
        score(model=second.outputs.model)
        return {"first": first.outputs.report}

    job = two_models(training_data=Input(type="uri_folder", path=str(HERE / "data")),
                     compute_train_node="cpu-cluster")
    job.settings.default_compute = "cpu-cluster"
    return job


def python_component():
    """A CommandComponent built in Python (the step-sequence notebook's shape)."""
    return CommandComponent(name="sdk_echo", display_name="Echo", command="echo hello > ${{outputs.out}}/hello.txt",
                            environment=ENVIRONMENT, outputs={"out": {"type": "uri_folder"}})


def pipeline_python_component():
    echo = python_component()

    @dsl.pipeline(name="echo_twice", description="two echoes")
    def echo_twice():
        first = echo()
        second = echo()
        return {"first": first.outputs.out, "second": second.outputs.out}

    job = echo_twice()
    job.settings.default_compute = "cpu-cluster"
    return job


def command_environment_build():
    """A command whose environment is a Docker build context (recorded, not built, locally)."""
    return command(command="echo built", environment=Environment(build=BuildContext(path=str(HERE / "docker"))),
                   compute="cpu-cluster", display_name="sdk-build")


def command_conda_environment():
    """An inline environment with a conda file (written beside the job)."""
    conda = HERE / "src" / "conda.yml"
    return command(command="python -c 'import sys; print(sys.version)'", compute="cpu-cluster",
                   environment=Environment(image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04:latest",
                                           conda_file=str(conda)))


def schedule_cron():
    return JobSchedule(name="sdk-cron", trigger=CronTrigger(expression="15 10 * * 1",
                                                            start_time=datetime(2030, 1, 1, 8, 0),
                                                            time_zone="Pacific Standard Time"),
                       create_job=pipeline_components(), display_name="weekly")


def schedule_recurrence():
    pattern = RecurrencePattern(hours=[2], minutes=[30], week_days=["sunday"])
    return JobSchedule(name="sdk-recurrence", trigger=RecurrenceTrigger(frequency="week", interval=1,
                                                                        schedule=pattern,
                                                                        start_time="2030-01-01T00:00:00"),
                       create_job=pipeline_command_steps())


JOBS = {name: function for name, function in globals().items()
        if callable(function) and name.split("_")[0] in ("command", "sweep", "pipeline")
        and name not in ("command",)}
SCHEDULES = {"schedule_cron": schedule_cron, "schedule_recurrence": schedule_recurrence}
COMPONENTS = {"python_component": python_component}
