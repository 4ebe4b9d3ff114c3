"""Data-parallel training of a small churn classifier with torch.distributed.

Azure ML (and aml-run, through torch's elastic launcher) starts this script once per process
and sets RANK, LOCAL_RANK, WORLD_SIZE, NODE_RANK, MASTER_ADDR and MASTER_PORT;
init_process_group() reads them (init method env://). Started without them (plain
`python train.py`), it trains as one process on the same global batches, which is how the tests
prove that DistributedDataParallel really averages the gradients of every rank.

Each global batch of --global-batch rows is split across the ranks: DistributedSampler gives
rank r every WORLD_SIZE-th row of one shared permutation, so with per-rank batches of
global/WORLD_SIZE rows, step i of all ranks together covers exactly rows [i*B, (i+1)*B) of that
permutation, the rows one process takes at step i.

Only global rank 0 logs metrics and saves the model (./outputs/model.pt); every rank records
the environment it was started with (./outputs/ranks/rank_<k>.json).
"""

import argparse
import json
import os
import sys
import pathlib

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

OUTPUTS = pathlib.Path("outputs")
RECORDED = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "NODE_RANK", "GROUP_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
            "MASTER_PORT", "OMP_NUM_THREADS", "MLFLOW_RUN_ID", "MLFLOW_TRACKING_URI", "AZUREML_PROCESS_NAME")


def synthetic_churn(rows: int = 1024) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(rows, 4, generator=generator, dtype=torch.float64)
    logits = 1.5 * x[:, 1] + 1.2 * x[:, 2] - 2.0 * x[:, 0] * x[:, 3]
    y = (logits + 0.3 * torch.randn(rows, generator=generator, dtype=torch.float64) > 0.4).double()
    return TensorDataset(x, y)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--global-batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.2)
    args = parser.parse_args()

    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
    train(args, distributed)
    if distributed:
        # train() has returned, so the DDP model and the last step's gradients are freed before
        # their process group is: a DDP model that outlives its group can abort the process as
        # the interpreter exits ("terminate called without an active exception").
        dist.barrier()
        dist.destroy_process_group()


def train(args: argparse.Namespace, distributed: bool) -> None:
    use_cuda = torch.cuda.is_available()
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device(f"cuda:{local_rank}" if use_cuda else "cpu")
    (OUTPUTS / "ranks").mkdir(parents=True, exist_ok=True)
    (OUTPUTS / "ranks" / f"rank_{rank}.json").write_text(json.dumps({k: os.environ.get(k) for k in RECORDED}))
    if args.global_batch % world:
        raise SystemExit(f"--global-batch {args.global_batch} must be a multiple of WORLD_SIZE {world}")

    torch.manual_seed(0)  # every rank starts from the same weights (DDP also broadcasts rank 0's)
    model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).double().to(device)
    trained = DistributedDataParallel(model, device_ids=[local_rank] if use_cuda else None) if distributed else model
    optimizer = torch.optim.SGD(trained.parameters(), lr=args.lr)
    dataset = synthetic_churn()
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0, drop_last=True)
    loader = DataLoader(dataset, batch_size=args.global_batch // world, sampler=sampler, drop_last=True)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a new shared permutation each epoch
        total = torch.zeros(3, dtype=torch.float64)  # loss sum, correct, rows
        for x, y in loader:
            optimizer.zero_grad()
            logits = trained(x.to(device)).squeeze(1)
            loss = loss_fn(logits, y.to(device))
            loss.backward()  # DDP: the gradients are averaged across all ranks here
            optimizer.step()
            total += torch.tensor([loss.item() * len(y), ((logits > 0).double() == y).sum().item(), len(y)])
        if distributed:
            dist.all_reduce(total)
        if rank == 0:
            import mlflow

            # Logged once per epoch from rank 0 only: the job has one run, shared by all ranks.
            mlflow.log_metric("loss", (total[0] / total[2]).item(), step=epoch)
            mlflow.log_metric("accuracy", (total[1] / total[2]).item(), step=epoch)
    if rank == 0:
        temporary = OUTPUTS / "model.pt.tmp"
        torch.save(model.state_dict(), temporary)
        temporary.replace(OUTPUTS / "model.pt")


if __name__ == "__main__":
    main()
    # Everything is written and flushed: end here, without the interpreter's shutdown. With
    # torch 2.x, gloo's threads can abort a process while the interpreter shuts down, after all
    # its work ("terminate called without an active exception", SIGABRT): about 1 run in 10 on a
    # loaded machine, in Azure ML as here, and the job fails. os._exit skips that teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
