#!/usr/bin/env python3
"""What one caller can make a server spend: memory, threads and CPU.

Starts a real supervisor and task worker (bazel-bin binaries, authentication
on, fresh tokens), then, for each kind of caller (anonymous, a worker's
token, an admin's token), runs the most expensive calls the contract lets it
make and reads the target process from /proc while they run:

  anonymous   requests at the server's receive bound (decoded before the
              caller is known), and server streams held open (reflection);
  worker      the same large requests with its token, and heartbeats that
              report the largest task lists for tasks that do not exist;
  admin       specs at SubmitSupervisor's bound, and status reads.

Prints one table row per (target, caller, attack): peak RSS growth over the
baseline, most threads seen, CPU seconds spent by the target, wall time.
Needs Python's grpcio (the clients' venv that scripts/install_deps.sh --tests
builds):

  bazel build //supervisor:sluice-supervisor //task:sluice-task
  ~/.cache/sluice/python-venv/grpcio-*/bin/python bench/caller_budget.py
"""
import argparse
import hashlib
import hmac
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time

import grpc

KIB = 1024
MIB = 1024 * KIB


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A target process, read from /proc."""

    def __init__(self, pid):
        self.pid = pid
        self.ticks = os.sysconf("SC_CLK_TCK")

    def status(self):
        out = {}
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                out[key] = value.strip()
        return out

    def rss_kib(self):
        return int(self.status()["VmRSS"].split()[0])

    def threads(self):
        return int(self.status()["Threads"])

    def cpu_seconds(self):
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.ticks


def measure(proc, attack):
    """Runs attack() while sampling proc; returns the row's figures."""
    base_rss = proc.rss_kib()
    base_cpu = proc.cpu_seconds()
    peak = {"rss": base_rss, "threads": proc.threads()}
    done = threading.Event()

    def sample():
        while not done.is_set():
            try:
                peak["rss"] = max(peak["rss"], proc.rss_kib())
                peak["threads"] = max(peak["threads"], proc.threads())
            except (FileNotFoundError, ProcessLookupError):
                return
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    start = time.monotonic()
    outcome = attack()
    wall = time.monotonic() - start
    time.sleep(0.5)  # what is still held afterwards
    done.set()
    sampler.join()
    after_rss = proc.rss_kib()
    return {
        "peak_rss_mib": (peak["rss"] - base_rss) / 1024,
        "kept_rss_mib": (after_rss - base_rss) / 1024,
        "threads": peak["threads"],
        "cpu_s": proc.cpu_seconds() - base_cpu,
        "wall_s": wall,
        "outcome": outcome,
    }


def unary(address, method, payload, token, timeout=30):
    channel = grpc.insecure_channel(
        address,
        options=[("grpc.max_send_message_length", 64 * MIB)],
    )
    call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    metadata = [("authorization", f"Bearer {token}")] if token else None
    try:
        call(payload, timeout=timeout, metadata=metadata)
        code = "OK"
    except grpc.RpcError as e:
        code = e.code().name
    channel.close()
    return code


def flood(address, method, payload, token, concurrency, rounds):
    codes = {}
    lock = threading.Lock()

    def worker():
        for _ in range(rounds):
            code = unary(address, method, payload, token)
            with lock:
                codes[code] = codes.get(code, 0) + 1

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ", ".join(f"{k} x{v}" for k, v in sorted(codes.items()))


def hold_streams(address, count, hold_seconds):
    """Opens `count` reflection streams (no credential needed) and holds them."""
    channel = grpc.insecure_channel(address)
    method = channel.stream_stream(
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        request_serializer=None, response_deserializer=None)
    release = threading.Event()

    def requests():
        release.wait()
        return
        yield  # a generator that sends nothing until released

    calls = [method(requests()) for _ in range(count)]
    time.sleep(hold_seconds)
    # A call made while the streams are held: is the server still answering?
    health = channel.unary_unary("/grpc.health.v1.Health/Check",
                                 request_serializer=None, response_deserializer=None)
    try:
        health(b"", timeout=5)
        answer = "health OK while held"
    except grpc.RpcError as e:
        answer = f"health {e.code().name} while held"
    release.set()
    for c in calls:
        c.cancel()
    channel.close()
    return f"{count} streams; {answer}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin_dir", default="bazel-bin")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--streams", type=int, default=400)
    args = parser.parse_args()
    supervisor_bin = os.path.join(args.bin_dir, "supervisor/sluice-supervisor")
    task_bin = os.path.join(args.bin_dir, "task/sluice-task")
    for b in (supervisor_bin, task_bin):
        if not os.access(b, os.X_OK):
            sys.exit(f"no {b}: bazel build //supervisor:sluice-supervisor //task:sluice-task")

    work = tempfile.mkdtemp(prefix="caller-budget-")
    os.chmod(work, 0o700)
    admin, worker, key = (secrets.token_hex(32) for _ in range(3))
    derived = hmac.new(key.encode(), b"sluice supervisor to worker w0", hashlib.sha256).hexdigest()
    sha = lambda t: hashlib.sha256(t.encode()).hexdigest()
    with open(f"{work}/tokens", "w") as f:
        f.write(f"sha256:{sha(admin)} admin\nsha256:{sha(worker)} w0\n"
                f"sha256:{sha(derived)} supervisor@w0\n")
    with open(f"{work}/policy", "w") as f:
        f.write("token:admin admin\ntoken:w0 worker w0 address=127.0.0.1:* max_capacity=4\n"
                "token:supervisor@w0 supervisor w0\n")
    for name, value in (("key", key), ("worker", worker)):
        with open(f"{work}/{name}.token", "w") as f:
            f.write(value)
    auth = [f"--auth_tokens_file={work}/tokens", f"--auth_policy_file={work}/policy"]
    sup_addr = f"127.0.0.1:{free_port()}"
    procs = []
    try:
        procs.append(subprocess.Popen(
            [supervisor_bin, f"--listen={sup_addr}", f"--data_dir={work}/supervisor",
             f"--auth_token_file={work}/key.token"] + auth,
            stdout=subprocess.DEVNULL, stderr=open(f"{work}/supervisor.log", "w")))
        task_addr = f"127.0.0.1:{free_port()}"
        procs.append(subprocess.Popen(
            [task_bin, f"--listen={task_addr}", f"--data_dir={work}/task", "--worker_id=w0",
             f"--supervisor={sup_addr}", f"--auth_token_file={work}/worker.token"] + auth,
            stdout=subprocess.DEVNULL, stderr=open(f"{work}/task.log", "w")))
        for address in (sup_addr, task_addr):
            deadline = time.time() + 60
            while unary(address, "/grpc.health.v1.Health/Check", b"", None, timeout=2) != "OK":
                if time.time() > deadline:
                    sys.exit(f"{address} did not come up; logs in {work}")
                time.sleep(0.2)
        time.sleep(2)  # the worker registers
        supervisor, task = Proc(procs[0].pid), Proc(procs[1].pid)

        near_bound = 4 * MIB - 64  # the largest request either server decodes
        big_list = field_bytes(1, b"d" * near_bound)  # ListSegments: datasource
        statuses = b"".join(
            field_bytes(2, field_bytes(1, f"ghost_{i:012d}_{i:08x}".encode()) + field_varint(5, 2))
            for i in range(60000))
        heartbeat = field_bytes(1, b"w0") + statuses[: 4 * MIB - 200]
        # SubmitSupervisor at its bound: a Druid spec's JSON text to parse.
        padding = b"a" * (1 * MIB - 200)
        spec = field_bytes(2, b'{"type": "kafka", "spec": {"dataSchema": {"dataSource": "' +
                           padding + b'"}}}')

        rows = []
        c, r = args.concurrency, args.rounds
        plan = [
            ("supervisor", supervisor, sup_addr, "anonymous", "4 MiB requests",
             lambda: flood(sup_addr, "/sluice.v1.SupervisorService/ListSegments", big_list, None, c, r)),
            ("supervisor", supervisor, sup_addr, "anonymous", "streams held",
             lambda: hold_streams(sup_addr, args.streams, 3)),
            ("supervisor", supervisor, sup_addr, "worker", "4 MiB requests",
             lambda: flood(sup_addr, "/sluice.v1.SupervisorService/ListSegments", big_list, worker, c, r)),
            ("supervisor", supervisor, sup_addr, "worker", "4 MiB heartbeats of unknown tasks",
             lambda: flood(sup_addr, "/sluice.v1.SupervisorService/WorkerHeartbeat", heartbeat, worker, c, r)),
            ("supervisor", supervisor, sup_addr, "admin", "1 MiB specs",
             lambda: flood(sup_addr, "/sluice.v1.SupervisorService/SubmitSupervisor", spec, admin, c, r)),
            ("supervisor", supervisor, sup_addr, "admin", "status reads",
             lambda: flood(sup_addr, "/sluice.v1.SupervisorService/ListSupervisors", b"", admin, c, r * 50)),
            ("worker", task, task_addr, "anonymous", "4 MiB requests",
             lambda: flood(task_addr, "/sluice.v1.TaskService/GetTaskStatus", big_list, None, c, r)),
            ("worker", task, task_addr, "anonymous", "streams held",
             lambda: hold_streams(task_addr, args.streams, 3)),
            ("worker", task, task_addr, "admin", "4 MiB requests",
             lambda: flood(task_addr, "/sluice.v1.TaskService/GetTaskStatus", big_list, admin, c, r)),
        ]
        for target, proc, _, caller, attack, run in plan:
            row = measure(proc, run)
            rows.append((target, caller, attack, row))
            print(f"{target:10} {caller:9} {attack:34} peak +{row['peak_rss_mib']:7.1f} MiB  "
                  f"kept +{row['kept_rss_mib']:6.1f} MiB  threads {row['threads']:4}  "
                  f"cpu {row['cpu_s']:6.2f} s  wall {row['wall_s']:6.2f} s  ({row['outcome']})",
                  flush=True)
        print(f"\n{c} concurrent callers x {r} rounds each; {args.streams} streams held 3 s; "
              f"targets' baselines: supervisor {supervisor.rss_kib() // 1024} MiB, "
              f"worker {task.rss_kib() // 1024} MiB RSS")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
