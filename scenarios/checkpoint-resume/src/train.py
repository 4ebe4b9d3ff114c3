"""Data-parallel training that survives losing its node: a checkpoint after every epoch.

On the spot tier the service can take the job's node at any time; the job then runs again
from the start of its command with the ./outputs folder it had. So rank 0 saves the model, the
optimizer and the epoch to ./outputs/checkpoint.pt after every epoch (written to a temporary
file and renamed, so a node taken mid-write leaves the previous checkpoint whole), and every
rank loads it when it starts. Each epoch started is recorded in ./outputs/epochs.log, so one
can count how much work the preemptions cost. Without a launcher (plain `python train.py`) it
trains as one process: the same weights, since the data order depends only on the epoch.
"""

import argparse
import os
import sys
import pathlib
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

OUTPUTS = pathlib.Path("outputs")
CHECKPOINT = OUTPUTS / "checkpoint.pt"


def synthetic_churn(rows: int = 512) -> TensorDataset:
    generator = torch.Generator().manual_seed(1)
    x = torch.rand(rows, 4, generator=generator, dtype=torch.float64)
    y = ((1.5 * x[:, 1] - 2.0 * x[:, 0] * x[:, 3] + 0.3 * torch.randn(rows, generator=generator,
                                                                    dtype=torch.float64)) > 0.0).double()
    return TensorDataset(x, y)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--epoch-seconds", type=float, default=0.0, help="stand-in for a longer epoch")
    args = parser.parse_args()

    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group(backend="gloo")
    train(args, distributed)
    if distributed:
        # train() has returned, so the DDP model is freed before its process group is: one that
        # outlives its group can abort the process as the interpreter exits.
        dist.barrier()
        dist.destroy_process_group()


def train(args: argparse.Namespace, distributed: bool) -> None:
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    start = 0
    if CHECKPOINT.exists():
        state = torch.load(CHECKPOINT)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
        if rank == 0:
            print(f"resuming from the checkpoint of epoch {state['epoch']}", flush=True)
    trained = DistributedDataParallel(model) if distributed else model
    dataset = synthetic_churn()
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0, drop_last=True)
    loader = DataLoader(dataset, batch_size=32 // world, sampler=sampler, drop_last=True)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    OUTPUTS.mkdir(exist_ok=True)
    for epoch in range(start, args.epochs):
        if rank == 0:
            with open(OUTPUTS / "epochs.log", "a") as log:
                log.write(f"{epoch}\n")
        sampler.set_epoch(epoch)
        total = torch.zeros(2, dtype=torch.float64)
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(trained(x).squeeze(1), y)
            loss.backward()
            optimizer.step()
            total += torch.tensor([loss.item() * len(y), len(y)])
        time.sleep(args.epoch_seconds)
        if distributed:
            dist.all_reduce(total)
        if rank == 0:
            import mlflow

            mlflow.log_metric("loss", (total[0] / total[1]).item(), step=epoch)
            temporary = CHECKPOINT.with_suffix(".tmp")
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, temporary)
            temporary.replace(CHECKPOINT)
        if distributed:
            dist.barrier()  # no rank starts the next epoch before the checkpoint is whole
    if rank == 0:
        torch.save(model.state_dict(), OUTPUTS / "model.pt.tmp")
        (OUTPUTS / "model.pt.tmp").replace(OUTPUTS / "model.pt")


if __name__ == "__main__":
    main()
    # Everything is written and flushed: end here, without the interpreter's shutdown. With
    # torch 2.x, gloo's threads can abort a process while the interpreter shuts down, after all
    # its work ("terminate called without an active exception", SIGABRT): about 1 run in 10 on a
    # loaded machine, in Azure ML as here, and the job fails. os._exit skips that teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
