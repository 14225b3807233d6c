"""File access through Beam's `FileSystems`, so one path syntax works everywhere: local paths,
`s3://` (apache-beam[aws]), `gs://` (apache-beam[gcp]) and any filesystem Beam registers.

Object stores have no directories and no atomic rename; `move` copies then deletes there, and
callers that need all-or-nothing publication write a marker file (the manifest) last.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
from collections.abc import Sequence
from typing import BinaryIO, NamedTuple
from urllib.parse import unquote

from pipeline import s3_objects

# Glob characters quoted as one-character classes. Beam's pattern translation doubles a backslash
# inside a class, so `[` becomes the class of `\` and `[` (Python warns about `[[]`).
_QUOTED = {"*": "[*]", "?": "[?]", "[": "[\\[]"}


def _filesystems():
    from apache_beam.io.filesystems import FileSystems

    return FileSystems


class UnsupportedFilesystem(ValueError):
    """A path whose scheme (`hdfs://`, `https://`) no installed Beam filesystem serves."""


def is_local(path: str) -> bool:
    return "://" not in path


def canonical(path: str) -> str:
    """A local path with links and `..` resolved, to compare with another; other paths as given."""
    return os.path.realpath(path) if is_local(path) else path


def user_path(path: str) -> str:
    """A path as people write it, as Beam opens it: `~` expanded (a quoted `'~/data/*.jsonl'`, a
    recipe's paths, `--output=~/out`), `file:///data` made `/data`."""
    if path.startswith(("file:///", "file://localhost/")):
        path = unquote(path[len("file://") :].removeprefix("localhost"))
    return os.path.expanduser(path) if is_local(path) else path


DOWNLOAD_FIRST = "; download the files first (Common Crawl's are also at s3://commoncrawl/)"
SCHEME_HINTS = {
    "http": DOWNLOAD_FIRST,
    "https": DOWNLOAD_FIRST,
    **{scheme: f"; write s3:// (Hadoop's {scheme}:// names the same objects)" for scheme in ("s3a", "s3n")},
}


def check_filesystem(path: str, what: str) -> None:
    """Raise UnsupportedFilesystem, one line naming `what` (`--output`) and the path, when Beam
    cannot serve `path`: an unknown scheme, or one whose filesystem's package is not installed
    (Beam's own errors are a traceback or a hint at apache-beam[gcp] whatever the scheme)."""
    path = user_path(path)
    if is_local(path):
        return
    from apache_beam.io.filesystem import BeamIOError

    try:
        _filesystems().get_filesystem(path)
    except (ValueError, BeamIOError) as error:
        causes = getattr(error, "exception_details", None) or {}
        cause = "; ".join(map(str, causes.values())) or "Beam knows no filesystem for it"
        scheme = path.split("://", 1)[0]
        raise UnsupportedFilesystem(
            f"{what} {path}: cannot use {scheme}:// paths ({cause}); gristmill reads and writes local "
            "paths, s3:// (apache-beam[aws]), gs:// (apache-beam[gcp]) and other filesystems Beam has installed"
            + SCHEME_HINTS.get(scheme, "")
        ) from None


# The S3 settings of the options last given (`set_options`, `use_object_store_options`: S3 is read
# and written with them through one client), and that client: (process id, settings, boto3 client),
# so that a client never crosses a fork.
_given_s3_settings = None
_s3_client = (0, None, None)


def set_options(options):
    """Give Beam's filesystems these pipeline options (endpoint, keys, region of object stores;
    Beam's S3 filesystem fails every call made before any are set), and gristmill's one S3 client
    the same: every setting goes through here, so the two never disagree."""
    use_object_store_options(options)
    _filesystems().set_options(options)
    return options


def use_object_store_options(options) -> None:
    """Read and write S3 with a run's `options` through one client in this process, without giving
    them to Beam's filesystems: a worker's filesystems hold the options its runner gave them (all
    of the run's options on some runners), which only Beam can read. None: through Beam's."""
    global _given_s3_settings
    _given_s3_settings = None if options is None else s3_objects.settings_of(options)


def use_options(flags: Sequence[str] = ()):
    """`set_options` from command-line flags (`--s3_endpoint_url=...`); returns the options."""
    from apache_beam.options.pipeline_options import PipelineOptions

    return set_options(PipelineOptions(list(flags)))


def _one_client(*paths: str):
    """This process's boto3 client for the settings last given, when every path is on S3 (None:
    none given, or a path elsewhere: Beam's filesystems serve it)."""
    global _s3_client
    if _given_s3_settings is None or not all(path.startswith("s3://") for path in paths):
        return None
    pid, settings, client = _s3_client
    if pid != os.getpid() or settings != _given_s3_settings:
        client = s3_objects.new_client(_given_s3_settings)
        _s3_client = (os.getpid(), _given_s3_settings, client)
    return client


def _open_s3(path: str, buffer_size: int) -> BinaryIO | None:
    """An `s3://` object through the one client (None: not on S3, or no options given)."""
    client = _one_client(path)
    return io.BufferedReader(s3_objects.S3Object(client, path), buffer_size=buffer_size) if client else None


def open_random_access(path: str) -> BinaryIO:
    """A seekable reader for a format read in pieces (Parquet's footer, then row groups): as
    `open_read`, with reads of 1 MiB at most on S3 (not a stream's 16 MiB past every seek)."""
    return _open_s3(path, 1 << 20) or open_read(path)


def parquet_reader(handle: BinaryIO, **options):
    """A `pyarrow.parquet.ParquetFile` over a Python file (`open_random_access`) that arrow reads
    from the calling thread only: its `pre_buffer` reads on arrow's I/O threads, and a buffer of a
    Python read freed there as the interpreter exits aborts the process ("terminate called without
    an active exception": docs/upstream/arrow_python_file_exit_abort.md). Read row groups with
    `use_threads=False` likewise."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(handle, pre_buffer=False, **options)


class UnreachableStorage(ValueError):
    """An object store that one quick request could not reach, or that refused it."""


def check_reachable(named_paths: list[tuple[str, str]], options) -> None:
    """Ask the `s3://` store for one key under each (what, path) (the Beam `options` give the
    endpoint and the credentials), so that an endpoint that does not answer, a missing bucket or
    refused credentials are one line naming `what` in seconds, not Beam's seven retries (5 to 10
    minutes) with a traceback each. Other schemes pass unchecked."""
    named_paths = [(what, path) for what, path in named_paths if path.startswith("s3://")]
    if not named_paths:
        return
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    client = s3_objects.new_client(
        s3_objects.settings_of(options),
        Config(connect_timeout=10, read_timeout=30, retries={"max_attempts": 2}),
    )
    for what, path in named_paths:
        bucket, key = s3_objects.bucket_and_key(path)
        try:
            client.list_objects_v2(Bucket=bucket, Prefix=re.split(r"[*?\[]", key, maxsplit=1)[0], MaxKeys=1)
        except ClientError as error:
            code, message = (error.response.get("Error", {}).get(k) for k in ("Code", "Message"))
            if code == "NoSuchBucket":
                raise UnreachableStorage(f"{what} {path}: the bucket {bucket!r} does not exist") from None
            if not code:  # an HTTP server that is not an S3 store (a web console's port)
                status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                raise UnreachableStorage(
                    f"{what} {path}: the endpoint answered HTTP {status} and no S3 error: it does "
                    "not look like an S3 store; check --s3_endpoint_url"
                ) from None
            raise UnreachableStorage(
                f"{what} {path}: the store refused to list it ({code}: {message}); check the "
                "credentials (--s3_access_key_id, --s3_secret_access_key or the AWS environment)"
            ) from None
        except BotoCoreError as error:  # no credentials, an endpoint that does not answer
            raise UnreachableStorage(
                f"{what} {path}: {error}; check --s3_endpoint_url, the network and the credentials"
            ) from None


def join(base: str, *parts: str) -> str:
    """`base/part/...` with exactly one separator (paths use `/` on every filesystem)."""
    return "/".join([base.rstrip("/"), *(part.strip("/") for part in parts)])


class ListingFailed(ValueError):
    """A glob the filesystem could not list (after its own retries)."""


class FileInfo(NamedTuple):
    """What a listing reports of one file."""

    size: int
    modified: float  # seconds since the epoch; 0.0 where the filesystem gives none


def listing(pattern: str) -> dict[str, FileInfo]:
    """Files matching a glob (`*` within a folder, `**` across folders, and `a/**/b` also matches
    `a/b` as Python's recursive glob does), sorted, with their size and modification time from the
    listing itself: no request per file (one took 170-355 ms on a local S3 server)."""
    # Beam lists nothing for a relative pattern that starts with a wildcard ("*.jsonl", "**/x")
    here = is_local(pattern) and not os.path.isabs(pattern) and not pattern.startswith("./")
    patterns = [f"./{pattern}" if here else pattern]
    if "**/" in pattern:
        patterns.append(patterns[0].replace("**/", "", 1))
    from apache_beam.io.filesystem import BeamIOError

    found: dict[str, FileInfo] = {}
    try:
        results = _filesystems().match(patterns)
    except BeamIOError as error:  # Beam's retries are spent: no network, no access
        causes = getattr(error, "exception_details", None) or {}
        raise ListingFailed(
            f"{pattern}: the listing failed: {'; '.join(map(str, causes.values()))}"
        ) from None
    for result in results:
        for meta in result.metadata_list:
            modified = getattr(meta, "last_updated_in_seconds", 0.0) or 0.0
            found[meta.path[2:] if here else meta.path] = FileInfo(meta.size_in_bytes, modified)
    if is_local(pattern):
        found = {path: info for path, info in found.items() if os.path.isfile(path)}
    else:  # an object store's "folder" (a key ending in "/", as its console makes one) is none
        found = {path: info for path, info in found.items() if not path.endswith("/")}
    return dict(sorted(found.items()))


def escape(path: str) -> str:
    """`path` as a pattern that matches only itself: its glob characters quoted. Folders from the
    command line go through this before a wildcard is added to them (`out[1]/kept/*.parquet`)."""
    return "".join(_QUOTED.get(char, char) for char in path)


def match(pattern: str) -> list[str]:
    """Sorted files matching a glob (as `listing`)."""
    return list(listing(pattern))


def size(path: str) -> int:
    """Bytes in one file: one metadata request on object stores (a `match` of a plain path makes two)."""
    if is_local(path):
        return os.path.getsize(path)
    client = _one_client(path)
    if client:
        return s3_objects.object_size(client, path)
    from apache_beam.io.filesystem import BeamIOError

    try:
        return _filesystems().get_filesystem(path).metadata(path).size_in_bytes
    except BeamIOError as error:
        if not exists(path):
            raise FileNotFoundError(path) from error
        raise


def exists(path: str) -> bool:
    client = _one_client(path)
    if client:
        try:
            s3_objects.object_size(client, path)
        except FileNotFoundError:
            return False
        return True
    return _filesystems().exists(path)


def open_read(path: str) -> BinaryIO:
    """A seekable binary reader of the raw bytes (no decompression: readers choose their codec).
    On s3://, once options were given (`set_options`, `use_object_store_options`), ranged GETs of
    16 MiB (as Beam's reader) through one boto3 client per process: Beam's S3 filesystem makes a
    client for every open, ~0.12 CPU-s, more than reading a small object."""
    from apache_beam.io.filesystem import CompressionTypes

    return _open_s3(path, 16 << 20) or _filesystems().open(
        path, compression_type=CompressionTypes.UNCOMPRESSED
    )


def read_bytes(path: str) -> bytes:
    with open_read(path) as handle:
        return handle.read()


def create(path: str) -> BinaryIO:
    """A new file (replacing one), written as given (no compression, whatever the name). On s3://,
    once options were given, through the one client (`s3_objects.S3Upload`): Beam's S3 filesystem
    makes a client and a multipart upload (3 requests) for every file, ~0.12 CPU-s before a byte
    is sent."""
    from apache_beam.io.filesystem import CompressionTypes

    client = _one_client(path)
    if client:
        return s3_objects.S3Upload(client, path)
    return _filesystems().create(path, compression_type=CompressionTypes.UNCOMPRESSED)


def write_bytes(path: str, data: bytes) -> None:
    """Create or replace a file with `data` (local parent folders are created)."""
    if is_local(path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with create(path) as handle:
        handle.write(data)


def write_whole(path: str, data: bytes) -> None:
    """`write_bytes`, so that a reader sees the old file or the new one, never part of it: a
    rename locally; on object stores a written object appears whole."""
    if is_local(path):
        write_bytes(path + ".tmp", data)
        move(path + ".tmp", path)
    else:
        write_bytes(path, data)


def delete(paths: list[str]) -> None:
    """Delete files that exist (missing ones are fine: deleting is idempotent). Local files are
    removed by name (Beam's local delete reads each path as a glob); object stores get one batch
    request, not a check per file: a missing object fails it only where the store says so, and
    then only the failed batch's paths are checked."""
    from apache_beam.io.filesystem import BeamIOError

    for path in filter(is_local, paths):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
    remote = [path for path in paths if not is_local(path)]
    if not remote:
        return
    client = _one_client(*remote)
    if client:
        s3_objects.delete_objects(client, remote)
        return
    try:
        _filesystems().delete(remote)
    except BeamIOError:
        if any(exists(path) for path in remote):
            raise


def delete_tree(folder: str) -> None:
    """Delete a folder (local; a link to a folder: what it holds) or every object under the prefix
    `folder/` (object stores: one recursive `FileSystems.delete` of `folder/`, a listing and batch
    deletes)."""
    if is_local(folder):
        # A file that cannot be deleted raises: ignored, an old shard stayed in a replaced kept/.
        if os.path.islink(folder):  # `kept -> /bigdisk/kept`: emptied, the link kept
            for entry in os.scandir(folder):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
            return
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(folder)
    else:
        _filesystems().delete([folder.rstrip("/") + "/"])


def move(source: str, destination: str) -> None:
    """Move one file: an atomic rename locally, copy then delete on object stores."""
    if is_local(source):
        os.makedirs(os.path.dirname(destination) or ".", exist_ok=True)
        os.replace(source, destination)
        return
    client = _one_client(source, destination)
    if client:
        s3_objects.move_object(client, source, destination)
    else:
        _filesystems().rename([source], [destination])


def make_folder(folder: str) -> None:
    """Create a local folder (object stores have none: a prefix exists once it holds a file)."""
    if is_local(folder):
        os.makedirs(folder, exist_ok=True)
