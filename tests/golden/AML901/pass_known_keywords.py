from azure.ai.ml import Input, MLClient, command
from azure.identity import DefaultAzureCredential

ml_client = MLClient.from_config(credential=DefaultAzureCredential())

job = command(
    command="python train.py --data ${{inputs.data}}",
    environment="sklearn-train:2",
    inputs={"data": Input(type="uri_folder", path="azureml:training-data:1")},
    compute="cpu-cluster",
)
ml_client.jobs.create_or_update(job)
