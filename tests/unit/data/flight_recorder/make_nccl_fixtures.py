# Writes the hand-written NCCL-shaped dumps of README.md (no GPU where they
# were made): the dict torch 2.14's FlightRecorder<CUDA event>::dump pickles
# (torch/csrc/distributed/c10d/FlightRecorderDetail.hpp: version "2.10",
# pg_config, pg_status, entries with "nccl:" names and the states NCCL's
# events give: scheduled, started, completed; nccl_comm_state), pickled by
# CPython (protocol 2, as torch's pickler writes). Run: python3 make_nccl_fixtures.py
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))


def entry(record_id, seq, op, state, sizes, where, duration=None, group=("0", "default_pg")):
    e = {
        "frames": [
            {"name": op, "filename": "/opt/venv/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py",
             "line": 2806},
            {"name": "wrapper", "filename": "/opt/venv/lib/python3.12/site-packages/torch/distributed/c10d_logger.py",
             "line": 83},
            {"name": where[2], "filename": where[0], "line": where[1]},
        ],
        "record_id": record_id, "pg_id": 0, "process_group": group, "thread_name": "pt_main_thread",
        "thread_id": "140234", "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
        "profiling_name": "nccl:" + op, "time_created_ns": 1795000000000000000 + seq * 1000000,
        "input_sizes": sizes, "input_dtypes": ["Float"], "output_sizes": sizes, "output_dtypes": ["Float"],
        "state": state,
        "time_discovered_started_ns": None if state == "scheduled" else 1795000000000000000 + seq * 1000000 + 10,
        "time_discovered_completed_ns": 1795000000000000000 + seq * 1000000 + 20 if state == "completed" else None,
        "retired": state == "completed", "timeout_ms": 600000, "is_p2p": False,
    }
    if duration is not None:
        e["duration_ms"] = duration
    return e


def dump(ranks, entries, status):
    return {
        "version": "2.10",
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": str(ranks)}},
        "comm_lib_version": "2.27.7",
        "pg_status": {"0": status},
        "entries": entries,
        "nccl_comm_state": {"0": {"commId": "0x1a2b", "rank": "0", "nRanks": str(len(ranks))}},
    }


def write(name, rank, d):
    os.makedirs(os.path.join(HERE, name), exist_ok=True)
    with open(os.path.join(HERE, name, "rank_%d" % rank), "wb") as f:
        pickle.dump(d, f, protocol=2)


TRAIN = ("/home/user/train.py", 88, "train_step")
# Rank 2 never enters all_reduce #1234: the others' kernels started and wait.
for r in range(4):
    last = 1233 if r == 2 else 1234
    es = [entry(i, 1230 + i, "all_reduce", "completed", [[1048576]], TRAIN, duration=1.5) for i in range(1, last - 1229)]
    if r != 2:
        es[-1] = entry(last - 1230, last, "all_reduce", "started", [[1048576]], TRAIN)
    write("nccl-4ranks-rank2-missing", r, dump([0, 1, 2, 3], es,
          {"last_enqueued_collective": last, "last_started_collective": last,
           "last_completed_collective": last - (0 if r == 2 else 1)}))
# Both ranks at all_reduce #88, with different sizes: a desynchronized program.
for r, size in ((0, [[1024]]), (1, [[2048]])):
    es = [entry(1, 87, "all_reduce", "completed", [[1024]], TRAIN), entry(2, 88, "all_reduce", "started", size, TRAIN)]
    write("nccl-2ranks-size-mismatch", r, dump([0, 1], es, {"last_enqueued_collective": 88,
          "last_started_collective": 88, "last_completed_collective": 87}))
# Every rank's all_gather #50 started and none completed: the collective itself is stuck.
for r in range(3):
    es = [entry(1, 49, "all_gather", "completed", [[256]], TRAIN), entry(2, 50, "all_gather", "started", [[256]], TRAIN)]
    write("nccl-3ranks-all-in-all_gather", r, dump([0, 1, 2], es, {"last_enqueued_collective": 50,
          "last_started_collective": 50, "last_completed_collective": 49}))
