"""amllab's Python face: azure-ai-ml (SDK v2) job objects as the CLI YAML ``az ml`` takes, and
Microsoft's SDK v2 notebooks and scripts run as they are against the local workspace.

    translate.py   SDK job, component and schedule objects -> CLI YAML files, and the REST body
                   check that proves a translation faithful
    client.py      the offline MLClient bound to a workspace, and the stand-in credentials
    hook.py        patches azure.ai.ml.MLClient and azure.identity's credentials as they are
                   imported (no import of azure-ai-ml until the user's code imports it)
    launch.py      ``python -m runner.sdk.launch SCRIPT [ARGS]``: a script with the hook installed
    notebook.py    ``aml-run notebook``/``aml-run script``: the run, its jobs, the summary
    session.py     what a run's kernel or script records for aml-run to read (no heavy imports)

azure-ai-ml is imported only by translate.py and client.py (the ``sdk`` extra); ``import
runner`` and ``import runner.sdk`` import neither it nor nbclient.
"""
