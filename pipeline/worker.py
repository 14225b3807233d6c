"""Entry point of local Beam worker processes: Beam's SDK harness with a quiet console, and
gristmill's one S3 client set up with the run's options before the first bundle.

On Ctrl-C a worker exits quietly. Workers send their log records to the runner (which prints
warnings and errors); their own console shows only errors from before that channel is open
(start-up notices and optional-client warnings are dropped).
"""

import json
import logging
import os
import re
import signal
import sys

# gRPC's fork handlers, run in a child forked while the harness's gRPC threads are busy, abort
# that child before it execs: 10-25 % of sandbox starts (Popen with user/group forks) died with
# SIGABRT in ev_epoll1_linux.cc (docs/upstream/grpc_fork_handlers.md). Every fork here is
# followed by exec or stays away from gRPC, which is when gRPC's docs say to turn them off.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")


def run_options(environment):
    """The run's pipeline options as the driver hands them to a local worker (`PIPELINE_OPTIONS`:
    a JSON object of `beam:option:<name>:v1` keys, from the provision info of `run.make_runner`),
    so that every step reads and writes `s3://` through `fileio`'s one client, not only steps
    that carry the options themselves (a resumed run has no read step)."""
    from apache_beam.options.pipeline_options import PipelineOptions

    encoded = json.loads(environment.get("PIPELINE_OPTIONS") or "{}")
    return PipelineOptions.from_dictionary(
        {re.sub(r"^beam:option:(.*):v1$", r"\1", name): value for name, value in encoded.items()}
    )


if __name__ == "__main__":
    # Ctrl-C reaches the whole process group; the driver reports it in one line, so a worker
    # just leaves, without a traceback (exit 0: the driver's runner would report a non-zero one).
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(0))
    from apache_beam.runners.worker import sdk_worker_main
    from apache_beam.runners.worker.log_handler import FnApiLogRecordHandler

    # Errors before the harness relays its records to the runner (which prints them): once it
    # does, a second copy here made every failed bundle's traceback appear twice more.
    console = logging.StreamHandler()
    console.setLevel(logging.ERROR)
    root = logging.getLogger()
    console.addFilter(lambda record: not any(isinstance(h, FnApiLogRecordHandler) for h in root.handlers))
    root.addHandler(console)

    from pipeline import fileio

    fileio.use_object_store_options(run_options(os.environ))
    sdk_worker_main.main(sys.argv)
