import threading

import apache_beam as beam
import pytest
from apache_beam.coders import coders
from apache_beam.coders.coder_impl import create_InputStream, create_OutputStream
from apache_beam.runners.portability.fn_api_runner import execution, worker_handlers
from apache_beam.runners.worker import data_plane
from apache_beam.transforms import core, window
from apache_beam.utils.windowed_value import WindowedValue

from pipeline import beam_fixes


def grouping_buffer():
    kv = coders.TupleCoder([coders.StrUtf8Coder(), coders.BytesCoder()])
    grouped = coders.TupleCoder([coders.StrUtf8Coder(), coders.IterableCoder(coders.BytesCoder())])
    windowed = coders.WindowedValueCoder
    pre = windowed(kv, coders.GlobalWindowCoder())
    post = windowed(grouped, coders.GlobalWindowCoder())
    buffer = execution.GroupingBuffer(pre, post, core.Windowing(window.GlobalWindows()))
    return buffer, pre.get_impl(), post.get_impl()


def fill(buffer, pre_impl, keys: int, values_per_key: int) -> None:
    out = create_OutputStream()
    for k in range(keys):
        for v in range(values_per_key):
            pre_impl.encode_to_stream(
                WindowedValue((f"key{k}", b"x" * 100 + bytes([v])), 0, [window.GlobalWindow()]), out, True
            )
    buffer.append(out.get())


def decode_all(chunks, post_impl) -> dict[str, list[bytes]]:
    seen: dict[str, list[bytes]] = {}
    for chunk in chunks:
        stream = create_InputStream(chunk)
        while stream.size() > 0:
            key, values = post_impl.decode_from_stream(stream, True).value
            assert key not in seen
            seen[key] = list(values)
    return seen


def test_grouped_output_is_cut_into_chunks_and_keeps_every_value(monkeypatch):
    monkeypatch.setattr(beam_fixes, "GROUPED_CHUNK_BYTES", 4096)
    buffer, pre_impl, post_impl = grouping_buffer()
    fill(buffer, pre_impl, keys=200, values_per_key=5)
    parts = beam_fixes._partition_in_chunks(buffer, 2)
    assert len(parts) == 2 and all(len(part) > 10 for part in parts)
    assert all(len(chunk) < 4096 + 1000 for part in parts for chunk in part)
    together = decode_all([chunk for part in parts for chunk in part], post_impl)
    assert sorted(together) == sorted(f"key{k}" for k in range(200))
    assert all(sorted(v) == [b"x" * 100 + bytes([i]) for i in range(5)] for v in together.values())
    assert beam_fixes._partition_in_chunks(buffer, 2) is parts  # computed once, like Beam's


def test_local_runner_fixes_are_installed_by_make_runner():
    from pipeline.run import make_runner, pipeline_options

    make_runner(pipeline_options([]))
    assert worker_handlers.DATA_BUFFER_TIME_LIMIT_MS == 0
    assert execution.GroupingBuffer.partition is beam_fixes._partition_in_chunks


def test_multi_worker_pipeline_with_a_large_shuffle_keeps_every_element(tmp_path):
    from pipeline.run import new_pipeline, pipeline_options

    options = pipeline_options(["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
    with new_pipeline(options) as pipeline:
        counts = (
            pipeline
            | beam.Create(range(20_000))
            | beam.Map(lambda i: (i % 97, b"y" * 2000))
            | beam.GroupByKey()
            | beam.Map(lambda kv: sum(1 for _ in kv[1]))
            | beam.CombineGlobally(sum)
        )
        counts | beam.Map(lambda n: (tmp_path / "n").write_text(str(n)))
    assert (tmp_path / "n").read_text() == "20000"


def send_while_a_flush_blocks(buffer_time_limit_ms: int) -> bytes:
    """Beam's runner-side input stream, as the runner builds it: write b"A", and while a flush of
    it blocks on the send queue write b"B"; return every byte that reached the queue.

    The block is forced with events, so the outcome does not depend on timing: with a timer
    (Beam's default, 1000 ms) the timer thread's flush wipes b"B" after sending b"A".
    """
    channel = data_plane._GrpcDataChannel(buffer_time_limit_ms)
    sent: list[bytes] = []
    flushing, written = threading.Event(), threading.Event()
    writer = threading.current_thread()

    def enqueue(element) -> None:
        if threading.current_thread() is not writer and not flushing.is_set():
            flushing.set()  # the timer's flush holds b"A" and waits, as on a full queue
            written.wait(10)
        sent.append(element.data)

    channel._enqueue_to_send = enqueue
    out = channel.output_stream("bundle_1", "read")
    out.write(b"A")
    if buffer_time_limit_ms > 0:
        assert flushing.wait(10), "the timer flush never ran"
    out.write(b"B")
    written.set()
    out.close()
    return b"".join(sent)


def test_unpatched_beam_loses_input_written_during_a_timer_flush():
    """The upstream bug (docs/upstream/beam_fnapi_timed_flush.md); if this starts failing, Beam
    fixed it and the patch may be dropped for that version."""
    assert send_while_a_flush_blocks(1000) == b"A"


def test_patched_runner_streams_lose_nothing_during_a_flush():
    beam_fixes.apply_local_runner_fixes()
    assert send_while_a_flush_blocks(worker_handlers.DATA_BUFFER_TIME_LIMIT_MS) == b"AB"


def test_an_unchecked_beam_version_is_refused(monkeypatch):
    monkeypatch.setattr(beam, "__version__", "2.78.0")
    with pytest.raises(
        beam_fixes.UncheckedBeamVersion, match=r"apache-beam 2\.78\.0 .* checked against 2\.77\.0"
    ):
        beam_fixes.apply_local_runner_fixes()


def test_a_failed_input_send_fails_the_pipeline_instead_of_hanging(monkeypatch):
    from pipeline.run import new_pipeline, pipeline_options

    original = data_plane._GrpcDataChannel.output_stream

    def breaking_output_stream(self, instruction_id, transform_id):
        stream = original(self, instruction_id, transform_id)
        write = stream.write

        def write_unless_sending_input(data) -> None:
            if threading.current_thread().name.startswith("send-"):  # the runner's input sender
                raise OSError("send queue closed")
            write(data)

        stream.write = write_unless_sending_input
        return stream

    monkeypatch.setattr(data_plane._GrpcDataChannel, "output_stream", breaking_output_stream)
    options = pipeline_options(["--direct_num_workers=2", "--direct_running_mode=multi_threading"])
    with pytest.raises(Exception, match="could not be sent to its worker: OSError: send queue closed"):
        with new_pipeline(options) as pipeline:
            _ = pipeline | beam.Create(range(10)) | beam.Reshuffle() | beam.Map(str)
