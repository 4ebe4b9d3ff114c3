"""Data-parallel training launched by MPI, with torch.distributed and without mpi4py.

Azure ML runs ``mpirun`` for a ``distribution: {type: mpi}`` job; every rank runs this
script. Open MPI tells each rank who it is (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK,
_LOCAL_SIZE) and Azure ML where the first node is (AZ_BATCH_MASTER_NODE, host:port). Nothing
sets RANK, WORLD_SIZE or MASTER_ADDR, so the script maps Open MPI's variables onto
torch.distributed itself:

    init_process_group("gloo", init_method=f"tcp://{AZ_BATCH_MASTER_NODE}",
                       rank=OMPI_COMM_WORLD_RANK, world_size=OMPI_COMM_WORLD_SIZE)

Every rank then fits y = 3x + 2 on its shard of the data, averaging gradients with
all_reduce at each step, and writes ./outputs/mpi_rank_<k>.json. An all_reduce of a vector
where each rank fills only its own slot proves that every rank took part. Rank 0 alone logs
metrics to the job's MLflow run. FAIL_RANK=k (an environment variable) makes rank k exit 3
before it joins, as a rank whose shard is missing would.
"""

import argparse
import datetime
import json
import os
import pathlib
import sys

OMPI = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK")
AZURE = ("AZ_BATCH_MASTER_NODE", "AZ_BATCHAI_MPI_MASTER_NODE", "AZ_BATCH_HOST_LIST")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()

    missing = [name for name in OMPI[:4] + AZURE[:1] if name not in os.environ]
    if missing:
        sys.exit(f"not started by mpirun (distribution.type mpi): {', '.join(missing)} not set")
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    local_rank = int(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"])
    master = os.environ["AZ_BATCH_MASTER_NODE"]
    print(f"rank {rank} of {size} (local rank {local_rank}), rendezvous at tcp://{master}", flush=True)
    if os.environ.get("FAIL_RANK", "") == str(rank):
        print(f"rank {rank}: FAIL_RANK={rank}, exiting with 3 before joining the others", flush=True)
        sys.exit(3)

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://{master}", rank=rank, world_size=size,
                            timeout=datetime.timedelta(seconds=120))

    # Who took part: each rank fills only its own slot; the sum has every slot filled.
    slots = torch.zeros(size)
    slots[rank] = rank + 1
    dist.all_reduce(slots)
    if slots.tolist() != [float(k + 1) for k in range(size)]:
        sys.exit(f"rank {rank}: all_reduce gave {slots.tolist()}; some rank did not take part")

    # Data parallel: the same 512 points everywhere, each rank trains on every size-th one.
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(512, generator=generator)
    y = 3 * x + 2 + 0.05 * torch.randn(512, generator=generator)
    mine_x, mine_y = x[rank::size], y[rank::size]
    w, b = torch.zeros(()), torch.zeros(())
    loss = float("nan")
    for step in range(args.steps):
        error = w * mine_x + b - mine_y
        # Sums over this shard: gradient of the squared error, squared error, count.
        local = torch.stack([(2 * error * mine_x).sum(), (2 * error).sum(), (error ** 2).sum(),
                             torch.tensor(float(len(mine_x)))])
        dist.all_reduce(local)
        count = local[3]
        w -= args.lr * local[0] / count
        b -= args.lr * local[1] / count
        loss = (local[2] / count).item()
        if rank == 0 and (step % 10 == 0 or step == args.steps - 1):
            import mlflow

            mlflow.log_metric("loss", loss, step=step)

    outputs = pathlib.Path("outputs")
    outputs.mkdir(exist_ok=True)
    record = {"rank": rank, "size": size, "local_rank": local_rank,
              "env": {name: os.environ.get(name) for name in OMPI + AZURE},
              "reduced": slots.tolist(), "ranks_sum": slots.sum().item(),
              "w": w.item(), "b": b.item(), "loss": loss}
    (outputs / f"mpi_rank_{rank}.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"rank {rank}: reduced {slots.tolist()}, w={w.item():.3f} b={b.item():.3f} loss={loss:.4f}", flush=True)
    if rank == 0:
        import mlflow

        mlflow.log_metric("ranks_sum", slots.sum().item())
        mlflow.log_metric("world_size", size)
    dist.barrier()  # every rank is done before any tears its connections down
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # Everything is written and flushed: end here, without the interpreter's shutdown. With
    # torch 2.x, gloo's threads can abort a process while the interpreter shuts down, after all
    # its work ("terminate called without an active exception", SIGABRT): about 1 run in 10 on a
    # loaded machine, in Azure ML as here, and the job fails. os._exit skips that teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
