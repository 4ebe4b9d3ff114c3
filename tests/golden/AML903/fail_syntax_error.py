from azure.ai.ml import MLClient, command

job = command(
    command="python train.py",
    environment="sklearn-train:2"
    compute="cpu-cluster",
)
