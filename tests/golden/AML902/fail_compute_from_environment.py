# The compute is read from the environment when the code runs: the linter says it cannot check
# it (info, shown with -v) instead of reporting a job without a compute.
import os

from azure.ai.ml import MLClient, command
from azure.identity import DefaultAzureCredential

ml_client = MLClient.from_config(credential=DefaultAzureCredential())

job = command(
    command="python train.py",
    environment="sklearn-train:2",
    compute=os.environ["TRAINING_COMPUTE"],
)
ml_client.jobs.create_or_update(job)
