"""Entry point of local Beam worker processes: Beam's SDK harness with a quiet console.

On Ctrl-C a worker exits quietly. Workers still send their log records to the runner (which prints warnings and errors); only
their own console chatter below ERROR (start-up notices, optional-client warnings) is dropped.
"""

import logging
import os
import signal
import sys

# gRPC's fork handlers, run in a child forked while the harness's gRPC threads are busy, abort
# that child before it execs: 10-25 % of sandbox starts (Popen with user/group forks) died with
# SIGABRT in ev_epoll1_linux.cc (docs/upstream/grpc_fork_handlers.md). Every fork here is
# followed by exec or stays away from gRPC, which is when gRPC's docs say to turn them off.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

if __name__ == "__main__":
    # Ctrl-C reaches the whole process group; the driver reports it in one line, so a worker
    # just leaves, without a traceback (exit 0: the driver's runner would report a non-zero one).
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(0))
    console = logging.StreamHandler()
    console.setLevel(logging.ERROR)
    logging.getLogger().addHandler(console)
    from apache_beam.runners.worker import sdk_worker_main

    sdk_worker_main.main(sys.argv)
