# Names assigned a literal, sums of literals, f-strings of them and the SDK's constants are
# followed: everything here is checked.
from azure.ai.ml import Input, MLClient, command
from azure.ai.ml.constants import AssetTypes, InputOutputModes
from azure.identity import DefaultAzureCredential

ml_client = MLClient.from_config(credential=DefaultAzureCredential())

cluster = "cpu-cluster"
asset = "training-data"
version = 1

job = command(
    command="python train.py --data ${{inputs.data}}",
    environment="sklearn-train" + ":2",
    inputs={"data": Input(type=AssetTypes.URI_FOLDER, path=f"azureml:{asset}:{version}", mode=InputOutputModes.RO_MOUNT)},
    compute=cluster,
)
ml_client.jobs.create_or_update(job)
