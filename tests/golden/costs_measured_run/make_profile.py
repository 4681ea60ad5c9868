# Writes profile.json: a small hand-made Kineto trace (PyTorch profiler JSON) of pipeline
# stage 0 with torch-pipelining markers, for `perflow costs` (see README.md beside it).
import json

events = [{"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "python"}}]
correlation = 0


def launch(at, start, dur, name, stream=7, args=None):
    global correlation
    correlation += 1
    events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10,
                   "tid": 10, "ts": at, "dur": 1, "args": {"correlation": correlation}})
    kernel_args = {"device": 0, "stream": stream, "correlation": correlation}
    kernel_args.update(args or {})
    events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream,
                   "ts": start, "dur": dur, "args": kernel_args})


def marker(name, start, end):
    events.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 10, "tid": 10,
                   "ts": start, "dur": end - start})


def memory(at, size, device_type=1):
    events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                   "pid": 10, "tid": 10, "ts": at,
                   "args": {"Total Reserved": 0, "Total Allocated": 0, "Bytes": size,
                            "Addr": 1, "Device Id": 0 if device_type else -1,
                            "Device Type": device_type}})


def send(at, start, dur, elements):
    launch(at, start, dur, "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
           stream=20, args={"In msg nelems": elements, "dtype": "BFloat16", "Group size": 2})


# F0: kernels [10, 40] and [50, 80]: busy 60us, a 10us gap; net allocation 1310720 bytes.
marker("PP:0F0", 0, 100)
launch(1, 10, 30, "gemm_f")
memory(2, 1048576)
memory(3, 999, device_type=0)  # a host allocation: not device memory
launch(4, 50, 30, "gemm_f")
memory(5, 524288)
memory(6, -262144)
send(7, 85, 3, 1000)  # 2000 bytes in 3us
# F1: [210, 240] and [245, 275]: busy 60us, a 5us gap; net 1314816 bytes.
marker("PP:0F1", 200, 300)
launch(201, 210, 30, "gemm_f")
memory(202, 1314816)
launch(204, 245, 30, "gemm_f")
send(207, 285, 5, 3000)  # 6000 bytes in 5us
# B0 (full backward): [410, 470] and [480, 540]: busy 120us, a 10us gap.
marker("PP:0B0", 400, 600)
launch(401, 410, 60, "gemm_b")
launch(402, 480, 60, "gemm_b")
memory(403, -1310720)
send(404, 550, 3, 1000)
# B1: [610, 670] and [672, 732]: busy 120us, a 2us gap; then the gradient all-reduce.
marker("PP:0B1", 600, 800)
launch(601, 610, 60, "gemm_b")
launch(602, 672, 60, "gemm_b")
memory(603, -1314816)
send(604, 740, 5, 3000)
launch(605, 750, 30, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long)",
       stream=21, args={"In msg nelems": 250000, "dtype": "Float", "Group size": 2})

trace = {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
         "traceEvents": events}
with open("profile.json", "w") as out:
    json.dump(trace, out, indent=0)
    out.write("\n")
