"""Entry point of local Beam worker processes: Beam's SDK harness with a quiet console.

Workers still send their log records to the runner (which prints warnings and errors); only
their own console chatter below ERROR (start-up notices, optional-client warnings) is dropped.
"""

import logging
import sys

if __name__ == "__main__":
    console = logging.StreamHandler()
    console.setLevel(logging.ERROR)
    logging.getLogger().addHandler(console)
    from apache_beam.runners.worker import sdk_worker_main

    sdk_worker_main.main(sys.argv)
