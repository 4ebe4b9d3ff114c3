"""AML9xx: jobs written in Python with the SDK v2, in a ``.py`` file or a notebook. The YAML
rules check the spec each submitted job becomes (validator/python_jobs); these are what only the
Python source shows. The reader of the source reports them; this module declares them."""

from __future__ import annotations

from ..diagnostic import Severity
from ._base import declare

KINDS = frozenset({"python"})

declare(
    "AML901", "dropped-sdk-keyword", Severity.ERROR,
    "An SDK v2 function is given a keyword it drops without an error.",
    doc="""
    Several of azure-ai-ml's job builders take `**kwargs` and pass them on: `command(...)` hands
    them to the component and the job it creates, which keep the keywords they know and drop the
    rest. So `command(comptue="cpu-cluster")` raises nothing, the spec sent to the service has no
    `compute`, and the job runs where the workspace's default puts it. A misspelt keyword of
    `.sweep(...)`, `set_limits(...)`, `Input(...)` or a trigger is lost the same way, or fails only
    when the job is submitted. The keywords each function uses are read from azure-ai-ml itself
    (tools/sdk_signatures.py); the linter never imports it.

    See: https://learn.microsoft.com/python/api/azure-ai-ml/azure.ai.ml#azure-ai-ml-command
    """,
    bad="""
    from azure.ai.ml import command
    job = command(command="python train.py", environment="azureml:sklearn:1", comptue="cpu-cluster")
    ml_client.jobs.create_or_update(job)
    """,
    good="""
    from azure.ai.ml import command
    job = command(command="python train.py", environment="azureml:sklearn:1", compute="cpu-cluster")
    ml_client.jobs.create_or_update(job)
    """,
    stage="python", kinds=KINDS, examples_are_runnable=False)

declare(
    "AML902", "value-not-static", Severity.INFO,
    "A value of a submitted job is known only when the code runs, so it is not checked.",
    doc="""
    The linter reads Python without running it: a literal, a name assigned one, the SDK's
    constructors and constants are followed; a value read from a file or the environment, returned
    by a function, or assigned differently in two branches is not. Rather than guess, the checks
    that need such a value skip it, and this finding (info, shown with `-v`) says which. Where a
    whole mapping the rules cross-check (the inputs, a pipeline's steps) is not known, the job is
    not checked at all.
    """,
    bad="""
    import os
    from azure.ai.ml import command
    job = command(command="python train.py", environment="azureml:sklearn:1",
                  compute=os.environ["COMPUTE"])
    ml_client.jobs.create_or_update(job)
    """,
    good="""
    from azure.ai.ml import command
    job = command(command="python train.py", environment="azureml:sklearn:1", compute="cpu-cluster")
    ml_client.jobs.create_or_update(job)
    """,
    stage="python", kinds=KINDS, examples_are_runnable=False)

declare(
    "AML903", "not-python", Severity.ERROR,
    "A file that uses azure-ai-ml is not valid Python, or a notebook is not a notebook.",
    doc="""
    A `.py` file that does not parse, or a `.ipynb` file that is not a notebook's JSON, cannot be
    read, so none of its jobs is checked. In a notebook, IPython's own syntax (`%pip install`,
    `!ls`, `%%bash` cells, `files = !ls`) is understood and left out.
    """,
    bad="""
    from azure.ai.ml import command
    job = command(command="python train.py"
    """,
    good="""
    from azure.ai.ml import command
    job = command(command="python train.py")
    """,
    stage="python", kinds=KINDS, examples_are_runnable=False)
