# The SDK takes both calls without an error and drops the misspelt keywords: the job runs on the
# workspace's default compute, and the data input is not named "TrainData".
from azure.ai.ml import Input, MLClient, command
from azure.ai.ml.sweep import Uniform
from azure.identity import DefaultAzureCredential

ml_client = MLClient.from_config(credential=DefaultAzureCredential())

job = command(
    command="python train.py --data ${{inputs.data}} --lr ${{inputs.lr}}",
    environment="sklearn-train:2",
    inputs={"data": Input(name="TrainData", type="uri_folder", path="azureml:training-data:1"), "lr": 0.01},
    comptue="cpu-cluster",
)
sweep = job(lr=Uniform(min_value=0.001, max_value=0.1)).sweep(primary_metric="auc", goal="maximize", sampling_algorithm="random")
sweep.set_limits(max_total_trials=8, max_concurent_trials=2)
ml_client.jobs.create_or_update(sweep)
