"""Beam's local job service, for `--runner=PortableRunner`, with the local runner's data-plane fix.

    python -m pipeline.job_service --port 8099

Beam's own `local_job_service_main` runs pipelines on the FnApiRunner, which can drop data with
several workers (see `pipeline.beam_fixes`); this entry point applies the fixes first and then
starts the same service.
"""

import logging
import signal
import sys

from pipeline.beam_fixes import apply_local_runner_fixes


def main(argv: list[str]) -> None:
    apply_local_runner_fixes()
    from apache_beam.runners.portability import local_job_service_main

    signal.signal(signal.SIGTERM, lambda *args: sys.exit(0))
    logging.basicConfig(level=logging.WARNING)
    local_job_service_main.run([local_job_service_main.__file__, *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
