"""Fixes to Beam's local FnApiRunner (apache-beam 2.77.0), applied before gristmill runs a pipeline
on it (`pipeline.run.make_runner`, `pipeline.job_service`). Cluster runners are not affected.

1. Lost input with several workers. The runner writes each bundle's input to a worker through an
   output stream that a 1 s timer thread flushes (`worker_handlers.DATA_BUFFER_TIME_LIMIT_MS`).
   That flush sends `get()` and then `_clear()`s the buffer without excluding the writing thread:
   bytes written while its send blocks on a full queue are wiped and never reach the worker.
   With two local worker processes this silently lost 5-50 % of large shuffles. Fix: no timer
   (size-based streams); each bundle's input is sent from its own thread, which flushes by size
   after every chunk it writes while the bundle manager reads the output. If that thread fails,
   the bundle fails with `InputNotSent` (its output reader stops waiting) instead of hanging.
   Upstream reproduction and proposed fix: docs/upstream/beam_fnapi_timed_flush.md.
2. One giant message per worker. A grouped shuffle's output for one worker was encoded into a
   single byte string (hundreds of MB to GB) and copied several times on its way to the worker,
   and near 2 GB it hits gRPC's message limit. Fix: grouped output is cut into chunks of about
   `GROUPED_CHUNK_BYTES` at element boundaries, and each grouped key's values are released as
   soon as they are encoded.

These replace private Beam internals, so they are applied only to the Beam versions they were
checked against (`CHECKED_BEAM_VERSIONS`); any other version stops the run with
`UncheckedBeamVersion` rather than run unpatched (silent loss) or patch code it was not read
against. A fallback to one worker was rejected: it would hide the version drift behind a run
several times slower, and pyproject pins the checked version anyway.
"""

from __future__ import annotations

import threading

GROUPED_CHUNK_BYTES = 32 << 20
CHECKED_BEAM_VERSIONS = ("2.77.0",)
# (runner-side data channel, process_bundle_id) -> the error that stopped the bundle's input sender.
_SEND_FAILURES: dict[tuple[int, str], BaseException] = {}


class UncheckedBeamVersion(RuntimeError):
    """The installed Beam is not a version these fixes were checked against."""


class InputNotSent(RuntimeError):
    """A bundle's input could not be sent to its worker; the bundle fails instead of hanging."""


def apply_local_runner_fixes() -> None:
    """Patch the FnApiRunner classes in this process (idempotent); refuse an unchecked Beam."""
    import apache_beam
    from apache_beam.runners.portability.fn_api_runner import execution, fn_runner, worker_handlers
    from apache_beam.runners.worker import data_plane

    if apache_beam.__version__ not in CHECKED_BEAM_VERSIONS:
        raise UncheckedBeamVersion(
            f"apache-beam {apache_beam.__version__} is installed, but gristmill's fixes to Beam's local "
            f"runner (pipeline/beam_fixes.py) were checked against {', '.join(CHECKED_BEAM_VERSIONS)} only; "
            "without them several local workers silently lose data. Install apache-beam=="
            f"{CHECKED_BEAM_VERSIONS[-1]} (as pyproject.toml pins), or use a cluster runner."
        )
    worker_handlers.DATA_BUFFER_TIME_LIMIT_MS = 0
    fn_runner.BundleManager._send_input_to_worker = _send_input_to_worker
    execution.GroupingBuffer.partition = _partition_in_chunks
    if data_plane._GrpcDataChannel.input_elements is not _input_elements:
        _input_elements.original = data_plane._GrpcDataChannel.input_elements
        data_plane._GrpcDataChannel.input_elements = _input_elements


def _send_input_to_worker(self, process_bundle_id: str, read_transform_id: str, byte_streams) -> None:
    """Beam's method, but over gRPC the input streams from its own thread, flushed by size.

    The caller goes on to read the bundle's output while this thread sends: sending everything
    first would block on the bounded send queue while the worker waits for its output to be read.
    A failed send is recorded for `_input_elements`, which then fails the bundle.
    """
    from apache_beam.runners.worker import data_plane

    data_conn = self._worker_handler.data_conn
    data_out = data_conn.output_stream(process_bundle_id, read_transform_id)

    def send() -> None:
        try:
            for byte_stream in byte_streams or []:
                data_out.write(byte_stream)
                data_out.maybe_flush()
            data_out.close()
        except BaseException as error:
            _SEND_FAILURES[id(data_conn), process_bundle_id] = error

    if isinstance(data_conn, data_plane._GrpcDataChannel):
        threading.Thread(target=send, name=f"send-{process_bundle_id}", daemon=True).start()
    else:  # in memory: nothing blocks, and an error is raised right here
        send()
        _raise_send_failure(data_conn, process_bundle_id)


def _input_elements(self, instruction_id, expected_inputs, abort_callback=None):
    """Beam's output reader for a bundle, which also stops when the bundle's input sender failed."""

    def aborted() -> bool:
        return (id(self), instruction_id) in _SEND_FAILURES or bool(abort_callback and abort_callback())

    yield from _input_elements.original(self, instruction_id, expected_inputs, aborted)
    _raise_send_failure(self, instruction_id)


def _raise_send_failure(data_conn, process_bundle_id: str) -> None:
    error = _SEND_FAILURES.pop((id(data_conn), process_bundle_id), None)
    if error is not None:
        message = " ".join(str(error).split()) or type(error).__name__
        raise InputNotSent(
            f"the input of {process_bundle_id} could not be sent to its worker: {type(error).__name__}: {message}"
        ) from error


def _partition_in_chunks(self, n: int) -> list[list[bytes]]:
    """Beam's `GroupingBuffer.partition` (keys dealt round-robin to n parts, computed once), with
    each part a list of ≤ ~GROUPED_CHUNK_BYTES encoded chunks instead of one byte string."""
    from apache_beam.coders.coder_impl import create_OutputStream
    from apache_beam.transforms import trigger
    from apache_beam.transforms.window import GlobalWindow, GlobalWindows
    from apache_beam.utils import windowed_value

    if self._grouped_output:
        return self._grouped_output
    if self._windowing.is_default():
        in_global_window = GlobalWindows.windowed_value(
            None,
            timestamp=GlobalWindow().max_timestamp(),
            pane_info=windowed_value.PaneInfo(
                is_first=True,
                is_last=True,
                timing=windowed_value.PaneInfoTiming.ON_TIME,
                index=0,
                nonspeculative_index=0,
            ),
        ).with_value

        def windowed_key_values(key, values):
            return [in_global_window((key, values))]

    else:
        windowed_key_values = trigger.create_trigger_driver(self._windowing, True).process_entire_key
    coder_impl = self._post_grouped_coder.get_impl()
    key_coder_impl = self._key_coder.get_impl()
    parts: list[list[bytes]] = [[] for _ in range(n)]
    streams = [create_OutputStream() for _ in range(n)]
    for index, encoded_key in enumerate(list(self._table)):
        values = self._table.pop(encoded_key)
        part = index % n
        for element in windowed_key_values(key_coder_impl.decode(encoded_key), values):
            coder_impl.encode_to_stream(element, streams[part], True)
        if streams[part].size() >= GROUPED_CHUNK_BYTES:
            parts[part].append(streams[part].get())
            streams[part] = create_OutputStream()
    for part, stream in enumerate(streams):
        parts[part].append(stream.get())
    self._grouped_output = parts
    return parts
