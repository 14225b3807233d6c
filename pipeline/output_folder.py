"""The output folder belongs to one run at a time, and only to gristmill.

A run holds an flock on LOCK_FILE while it writes, in the output folder and in a `--work-dir`
elsewhere; before it replaces the folder's parts it checks that an earlier gristmill run wrote them
(OUTPUT_MARKER, or a manifest) and that no input file lies among them, and that its work area
(deleted after the run) holds nothing but checkpoints; it removes staging folders that killed runs
left behind.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
from collections.abc import Iterator
from typing import Any

from pipeline import fileio

OUTPUT_PARTS = ("kept", "rejected", "failed")
WORK_FOLDER = ".gristmill-work"  # checkpoints, inside the output folder unless --work-dir
LOCK_FILE = ".gristmill-lock"  # held by the run writing into the output folder
OUTPUT_MARKER = ".gristmill-output"  # this folder is gristmill's: a rerun may replace what it holds
REPLACED_FILES = ("manifest.json", "report.html", "README.md")  # and OUTPUT_PARTS' folders
# Not empty: Beam's S3 writer cannot complete an upload of no bytes.
MARKER_TEXT = b"a gristmill output folder: a rerun replaces kept/, rejected/, failed/ and the manifest\n"


class OutputInUse(ValueError):
    """Another run is using the same local output folder or work area."""


# A phase's checkpoint folder (`pipeline.checkpoints.WorkArea.folder`): a user's `phase-1-notes`
# in a --work-dir was taken for one, and deleted with the work area.
FINGERPRINT_CHARS = 24
PHASE_FOLDER = re.compile(rf"phase-\d+-[0-9a-f]{{{FINGERPRINT_CHARS}}}")


class OutputNotOurs(ValueError):
    """The output folder holds files a run would replace, and gristmill did not write them."""


class InputInsideOutput(ValueError):
    """An input file lies where the run replaces or deletes files."""


class WorkDirNotOurs(ValueError):
    """The work area would hold more than checkpoints; deleting it would lose the rest."""


def check_work_root(work_root: str, output: str, spill_root: str | None = None) -> None:
    """Refuse a work area that holds anything but gristmill's phase folders, or the output, or the
    spill folder.

    The work area is deleted after a successful run and by `--fresh`; `--work-dir .` deleted the
    current folder.
    """
    root = work_root.rstrip("/")
    spill = (spill_root or "").rstrip("/")
    if fileio.is_local(root):
        root, output = os.path.realpath(root), os.path.realpath(output)
        spill = os.path.realpath(spill) if spill else ""
        if os.path.exists(root) and not os.path.isdir(root):
            raise WorkDirNotOurs(f"{work_root}: --work-dir is a file, not a folder")
        entries = sorted(os.listdir(root)) if os.path.isdir(root) else []
    else:
        entries = sorted(
            {path[len(root) + 1 :].split("/")[0] for path in fileio.match(f"{fileio.escape(root)}/**")}
        )
    deleted = "the work area is deleted after a successful run and by --fresh"
    if output == root or output.startswith(root + "/"):
        raise WorkDirNotOurs(f"{work_root}: the output folder would be inside the work area; {deleted}")
    if any(f"{root}/".startswith(f"{output.rstrip('/')}/{part}/") for part in OUTPUT_PARTS):
        raise WorkDirNotOurs(
            f"{work_root}: inside the output folder's kept/, rejected/ or failed/, which a run replaces "
            "(the checkpoints would be deleted); give --work-dir another folder"
        )
    if spill and (spill == root or spill.startswith(root + "/")):  # a killed run's spill blocked the rerun
        raise WorkDirNotOurs(f"{work_root}: --spill_dir is inside the work area; give them different folders")
    others = [repr(entry) for entry in entries if not PHASE_FOLDER.fullmatch(entry) and entry != LOCK_FILE]
    if others:
        raise WorkDirNotOurs(
            f"{work_root}: holds {_first_of(others)} besides checkpoints; {deleted}: "
            "give --work-dir a new or empty folder"
        )


@contextlib.contextmanager
def exclusive(folder: str, option: str = "--output") -> Iterator[None]:
    """Hold a local folder for one run (an flock on LOCK_FILE, which holds the pid): the output
    folder, or a `--work-dir` (`option` names it in the error).

    A second run into the same folder stops at once instead of deleting the first one's staging
    area or checkpoints, or sharing them. The lock goes with the process, so a killed run leaves
    none behind. Object stores have no lock.
    """
    if not fileio.is_local(folder):
        yield
        return
    import fcntl

    path = os.path.join(folder, LOCK_FILE)
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise OutputInUse(
                f"{folder}: another gristmill run (pid {holder}) is using this folder; "
                f"wait for it to end or choose another {option}"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):  # the folder was deleted during the run
                os.unlink(path)  # while still held, so the next run makes a fresh file


def clear_work_area(work_root: str) -> None:
    """Delete the work area's checkpoints (after a run, or for `--fresh`), and the folder once
    empty; the lock a run holds on it stays (deleting it would let a second run take a new one)."""
    if not fileio.is_local(work_root):
        fileio.delete_tree(work_root)
        return
    for entry in os.listdir(work_root) if os.path.isdir(work_root) else []:
        if entry != LOCK_FILE:
            shutil.rmtree(os.path.join(work_root, entry), ignore_errors=True)
    remove_if_empty(work_root)


def remove_if_empty(folder: str) -> None:
    """Remove a local folder that holds nothing."""
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def check_replaceable(output: str) -> None:
    """Refuse an output folder whose `kept/`, `rejected/`, `failed/`, manifest, report or README a
    run would replace when gristmill did not write them (a run deleted a user's `kept/` folder).

    Gristmill's folders carry OUTPUT_MARKER (`mark_output`); one with a gristmill manifest and no
    marker is a finished run of an earlier version (any other `manifest.json`, a web app's, is not).
    """
    if fileio.exists(fileio.join(output, OUTPUT_MARKER)) or _holds_gristmill_manifest(output):
        return
    found = [name for name in REPLACED_FILES if fileio.exists(fileio.join(output, name))]
    found += [
        f"{part}/" for part in OUTPUT_PARTS if fileio.match(fileio.join(fileio.escape(output), part, "**"))
    ]
    if found:
        raise OutputNotOurs(
            f"{output}: holds {', '.join(found)}, which a run replaces, and is not a gristmill output; "
            "choose a new or empty --output folder"
        )


def is_gristmill_manifest(manifest: Any) -> bool:
    """Whether a parsed `manifest.json` is gristmill's: a JSON object with a list of shards."""
    return isinstance(manifest, dict) and isinstance(manifest.get("shards"), list)


def _holds_gristmill_manifest(output: str) -> bool:
    """Whether `output/manifest.json` is a gristmill manifest (`is_gristmill_manifest`)."""
    path = fileio.join(output, "manifest.json")
    if not fileio.exists(path):
        return False
    try:
        return is_gristmill_manifest(json.loads(fileio.read_bytes(path)))
    except (ValueError, RecursionError):
        return False


def check_inputs_outside(output: str, files: list[str], work_dir: str | None = None) -> None:
    """Refuse input files inside what the run replaces or deletes in `output`: its parts, staging
    folders and work area, or in the `--work-dir` given (`--input 'data/**/*.parquet' --output
    data/out` read the last run's shards, and replaced them; a rerun read the checkpoints' markers)."""
    canonical = {path: fileio.canonical(path) for path in files}
    if work_dir:
        work = fileio.canonical(work_dir).rstrip("/") + "/"
        if inside := [path for path in files if canonical[path].startswith(work)]:
            raise InputInsideOutput(
                f"{_first_of(inside)}: input inside the --work-dir, whose checkpoints a rerun would "
                "read as input and which is deleted after the run; give --work-dir another folder"
            )
    folder = fileio.canonical(output).rstrip("/")
    replaced = tuple(f"{folder}/{name}/" for name in (*OUTPUT_PARTS, WORK_FOLDER)) + (f"{folder}/.staging-",)
    if inside := [path for path in files if canonical[path].startswith(replaced)]:
        raise InputInsideOutput(
            f"{_first_of(inside)}: input inside the output folder's kept/, rejected/, failed/ or "
            "work area, which this run replaces; narrow the --input glob or write to another --output"
        )


def earlier_outputs(files: list[str]) -> dict[str, list[str]]:
    """The files among `files`, local or on an object store, that belong to a gristmill output
    folder (one with OUTPUT_MARKER: the file's folder, or its parent for kept/, rejected/, failed/
    shards), by folder."""
    marked: dict[str, bool] = {}
    found: dict[str, list[str]] = {}
    for path in files:
        folder = _parent(path)
        for candidate in (folder, None if folder is None else _parent(folder)):
            if candidate is None:
                break
            if candidate not in marked:
                marked[candidate] = fileio.exists(
                    fileio.join(candidate, OUTPUT_MARKER) if candidate else OUTPUT_MARKER
                )
            if marked[candidate]:
                found.setdefault(candidate or ".", []).append(path)
                break
    return found


def _parent(path: str) -> str | None:
    """The folder holding `path` (None above a bucket: `s3://bucket` has none)."""
    if fileio.is_local(path):
        return os.path.dirname(path)
    scheme, rest = path.split("://", 1)
    return f"{scheme}://{rest.rsplit('/', 1)[0]}" if "/" in rest else None


def is_shard_of(path: str, output: str) -> bool:
    """Whether `path` lies in the kept/, rejected/ or failed/ part of the output folder `output`."""
    if not fileio.is_local(path):
        return (
            path.startswith(output.rstrip("/") + "/")
            and path[len(output) :].lstrip("/").split("/")[0] in OUTPUT_PARTS
        )
    return os.path.relpath(path, output).split(os.sep)[0] in OUTPUT_PARTS


def is_output_file(path: str) -> bool:
    """Whether `path` is one an output folder's run writes beside its parts (manifest, report, ...)."""
    return path.replace(os.sep, "/").rsplit("/", 1)[-1] in (OUTPUT_MARKER, *REPLACED_FILES)


def _first_of(names: list[str]) -> str:
    return f"{names[0]} and {len(names) - 1} more" if len(names) > 1 else names[0]


def mark_output(output: str) -> None:
    """Mark the folder as gristmill's before a run publishes into it, so reruns may replace it."""
    fileio.write_bytes(fileio.join(output, OUTPUT_MARKER), MARKER_TEXT)


def remove_stale_staging(output: str) -> None:
    """Staging folders left by runs that were killed: never published, never reused."""
    if fileio.is_local(output):
        import glob

        for folder in glob.glob(fileio.join(glob.escape(output), ".staging-*")):
            shutil.rmtree(folder, ignore_errors=True)
    else:
        fileio.delete(fileio.match(fileio.join(fileio.escape(output), ".staging-*/**")))


FULL_DISK = tuple(os.strerror(code) for code in (errno.ENOSPC, errno.EDQUOT))
# What else to do than make room, when a disk fills or may fill.
OTHER_DISK_ADVICE = (
    "write the checkpoints (--work-dir) or the dedup stages' spill files (--spill_dir) to another disk"
)


def full_disk_advice(error: str, folders: dict[str, str]) -> str | None:
    """When a run's error says a disk (or a quota) is full: the space free now on each local
    filesystem among `folders` ({what is written: folder}), and how to make room; else None."""
    if not any(reason.lower() in error.lower() for reason in FULL_DISK):
        return None
    from pipeline.progress import size_text

    free = "; ".join(
        f"{size_text(shutil.disk_usage(folder).free)} free on {folder} ({', '.join(whats)})"
        for folder, whats in folders_by_disk(folders)
    )
    return f"a disk is full ({error}); {free}: make room, or {OTHER_DISK_ADVICE}"


def folders_by_disk(folders: dict[str, str]) -> list[tuple[str, list[str]]]:
    """The local filesystems among `folders` ({what is written: folder}), each as its first folder
    (or that folder's nearest existing parent) and what is written there."""
    by_device: dict[int, tuple[str, list[str]]] = {}
    for what, folder in folders.items():
        if not fileio.is_local(folder):
            continue
        existing = os.path.abspath(folder)
        while not os.path.exists(existing):  # not made yet, or gone with a failed run
            existing = os.path.dirname(existing)
        by_device.setdefault(os.stat(existing).st_dev, (existing, []))[1].append(what)
    return list(by_device.values())
