"""The sluice Python client example.

Submits the README's spec, waits until records are committed, lists the
datasource's segments and prints the supervisor's status. The stubs
(sluice/v1/*_pb2*.py) are generated from proto/sluice/v1/*.proto by run.sh
at run time; none are committed.

Exits 0 when everything worked; otherwise prints
"error: <what>: <gRPC code>: <message>" on stderr and exits 1 (2 for bad
flags).
"""

import argparse
import json
import os
import re
import sys
import time

import grpc
from google.protobuf import json_format

from sluice.v1 import supervisor_service_pb2 as sv
from sluice.v1 import supervisor_service_pb2_grpc as sv_grpc
from sluice.v1 import spec_pb2


def fail(what, err=None):
    if isinstance(err, grpc.RpcError):
        print(f"error: {what}: {err.code().name}: {err.details()}", file=sys.stderr)
    elif err is not None:
        print(f"error: {what}: {err}", file=sys.stderr)
    else:
        print(f"error: {what}", file=sys.stderr)
    sys.exit(1)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--supervisor", default=os.environ.get("SLUICE_SUPERVISOR", "127.0.0.1:7070"),
                   help="the supervisor's address ($SLUICE_SUPERVISOR)")
    p.add_argument("--auth_token_file", default=os.environ.get("SLUICE_AUTH_TOKEN_FILE", ""),
                   help="file with the bearer token to present ($SLUICE_AUTH_TOKEN_FILE; "
                        "$SLUICE_AUTH_TOKEN holds the token itself)")
    p.add_argument("--tls_ca", default="", help="CA certificate (PEM): TLS instead of plaintext")
    p.add_argument("--tls_cert", default="", help="client certificate (PEM) for mutual TLS")
    p.add_argument("--tls_key", default="", help="client key (PEM) for mutual TLS")
    p.add_argument("--tls_server_name", default="",
                   help="the name to verify the server certificate against")
    p.add_argument("--readme", default="README.md",
                   help="the README whose spec is submitted (the ```json block after "
                        "\"A spec reads like Druid's\")")
    p.add_argument("--spec", default="", help="submit this spec file (JSON) instead")
    p.add_argument("--datasource", default="", help="override the spec's datasource")
    p.add_argument("--bootstrap", default="",
                   help="override ioConfig.consumerProperties[\"bootstrap.servers\"]")
    p.add_argument("--task_duration", default="",
                   help="override ioConfig.taskDuration (e.g. PT10S: groups commit at roll-over)")
    p.add_argument("--period", default="", help="override ioConfig.period")
    p.add_argument("--start_delay", default="", help="override ioConfig.startDelay")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds to wait for committed records")
    return p.parse_args()


def readme_spec(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"A spec reads like Druid's.*?```json\n(.*?)```", text, re.S)
    if m is None:
        raise ValueError(f"{path}: no ```json block after \"A spec reads like Druid's\"")
    return m.group(1)


def load_spec(args):
    if args.spec:
        with open(args.spec, encoding="utf-8") as f:
            raw = f.read()
    else:
        raw = readme_spec(args.readme)
    spec = json.loads(raw)
    if args.datasource:
        spec["datasource"] = args.datasource
    io = spec.setdefault("ioConfig", {})
    if args.bootstrap:
        io.setdefault("consumerProperties", {})["bootstrap.servers"] = args.bootstrap
    for key, value in (("taskDuration", args.task_duration), ("period", args.period),
                       ("startDelay", args.start_delay)):
        if value:
            io[key] = value
    return json_format.ParseDict(spec, spec_pb2.SupervisorSpec())


def channel(args):
    if not args.tls_ca:
        if args.tls_cert or args.tls_key:
            raise ValueError("--tls_cert/--tls_key need --tls_ca")
        return grpc.insecure_channel(args.supervisor)

    def read(path):
        with open(path, "rb") as f:
            return f.read()

    creds = grpc.ssl_channel_credentials(
        root_certificates=read(args.tls_ca),
        private_key=read(args.tls_key) if args.tls_key else None,
        certificate_chain=read(args.tls_cert) if args.tls_cert else None)
    options = []
    if args.tls_server_name:
        options.append(("grpc.ssl_target_name_override", args.tls_server_name))
    return grpc.secure_channel(args.supervisor, creds, options=options)


def token(args):
    if args.auth_token_file:
        with open(args.auth_token_file, encoding="utf-8") as f:
            return f.read().strip()
    return os.environ.get("SLUICE_AUTH_TOKEN", "").strip()


def main():
    args = parse_args()
    try:
        spec = load_spec(args)
    except (OSError, ValueError, json_format.ParseError) as e:
        fail("spec", e)
    try:
        tok = token(args)
        ch = channel(args)
    except (OSError, ValueError) as e:
        fail("credentials", e)
    metadata = [("authorization", f"Bearer {tok}")] if tok else []
    stub = sv_grpc.SupervisorServiceStub(ch)
    ds = spec.datasource

    def call(what, method, request):
        try:
            return method(request, metadata=metadata, timeout=30)
        except grpc.RpcError as e:
            fail(what, e)

    submitted = call("SubmitSupervisor", stub.SubmitSupervisor, sv.SubmitSupervisorRequest(spec=spec))
    print(f"submitted datasource {ds} (spec version {submitted.version})", flush=True)

    # Committed records: the commit log's sequences, end - start per partition.
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            log = stub.GetCommitLog(sv.GetCommitLogRequest(datasource=ds), metadata=metadata, timeout=30)
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.UNAVAILABLE:
                fail("GetCommitLog", e)
            log = sv.GetCommitLogResponse()
        committed = sum(end - seq.start_offsets.get(p, 0)
                        for seq in log.sequences for p, end in seq.end_offsets.items())
        if committed > 0:
            break
        if time.monotonic() > deadline:
            fail(f"no records committed for {ds} within {args.timeout:g}s")
        time.sleep(0.5)
    print(f"committed records: {committed}", flush=True)

    segments = call("ListSegments", stub.ListSegments, sv.ListSegmentsRequest(datasource=ds))
    print(f"segments: {len(segments.segments)}")
    for s in segments.segments:
        print(f"  {s.id} rows={s.num_rows} bytes={s.size_bytes}")

    response = call("GetSupervisorStatus", stub.GetSupervisorStatus,
                    sv.GetSupervisorStatusRequest(datasource=ds))
    print("status: " + json_format.MessageToJson(response.status, preserving_proto_field_name=True))
    ch.close()


if __name__ == "__main__":
    main()
