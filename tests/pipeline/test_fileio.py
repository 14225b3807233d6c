"""pipeline.fileio on local paths (the same calls on s3:// are in test_s3.py)."""

import os

import pytest

from pipeline import fileio


def test_delete_skips_missing_files_and_delete_tree_removes_everything_below(tmp_path):
    folder = tmp_path / "tree"
    fileio.write_bytes(str(folder / "a.bin"), b"abc")
    fileio.write_bytes(str(folder / "sub" / "b.bin"), b"de")
    assert fileio.size(str(folder / "a.bin")) == 3
    with pytest.raises(FileNotFoundError):
        fileio.size(str(folder / "missing.bin"))

    fileio.delete([str(folder / "a.bin"), str(folder / "missing.bin")])
    assert not (folder / "a.bin").exists() and (folder / "sub" / "b.bin").exists()
    fileio.delete([str(folder / "missing.bin")])  # idempotent

    fileio.delete_tree(str(folder))
    assert not folder.exists()
    fileio.delete_tree(str(folder))  # a missing folder is fine too


def test_delete_tree_empties_a_linked_folder_and_keeps_the_link(tmp_path):
    """`kept -> /bigdisk/kept`: rmtree refuses a link (ignored, old shards stayed beside new ones)."""
    target, link = tmp_path / "bigdisk" / "kept", tmp_path / "out" / "kept"
    fileio.write_bytes(str(target / "part-00000-of-00002.parquet"), b"old")
    fileio.write_bytes(str(target / "sub" / "b.bin"), b"de")
    link.parent.mkdir()
    link.symlink_to(target)
    fileio.delete_tree(str(link))
    assert link.is_symlink() and target.is_dir() and list(target.iterdir()) == []


def test_an_escaped_path_matches_only_itself(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("a[1]", "a1", "b*", "bx", "c?", "cx"):
        fileio.write_bytes(f"{name}/f.txt", b"x")
    for name in ("a[1]", "b*", "c?"):
        assert fileio.match(fileio.escape(name) + "/*.txt") == [f"{name}/f.txt"]
        assert fileio.match(str(tmp_path / fileio.escape(name)) + "/*") == [str(tmp_path / name / "f.txt")]
    assert fileio.match("a[1]/*.txt") == ["a1/f.txt"]  # a pattern stays a pattern
    fileio.delete(["a[1]/f.txt", "b*/f.txt"])
    assert sorted(os.listdir(tmp_path / "a1")) == ["f.txt"] and os.listdir(tmp_path / "a[1]") == []
    assert os.listdir(tmp_path / "bx") == ["f.txt"] and os.listdir(tmp_path / "b*") == []


def test_a_listing_that_fails_after_the_filesystems_retries_is_one_line(monkeypatch):
    """gs:// with no network: google's client retries for 120 s, then Beam raises its BeamIOError."""
    from apache_beam.io.filesystem import BeamIOError

    class Offline:
        @staticmethod
        def match(patterns):
            inner = BeamIOError("List operation failed with exceptions", {"gs://b/d/": TimeoutError("120 s")})
            raise BeamIOError("Match operation failed", {patterns[0]: inner})

    monkeypatch.setattr(fileio, "_filesystems", lambda: Offline)
    with pytest.raises(fileio.ListingFailed, match=r"^gs://b/d/\*.jsonl: the listing failed: List operation"):
        fileio.listing("gs://b/d/*.jsonl")


def test_s3_options_with_a_key_id_but_no_secret_are_one_clear_error():
    """Before, botocore's PartialCredentialsError went up as a traceback (exit 1) from run,
    inspect, report and the trainer reader."""
    from pipeline.s3_objects import S3SettingsError

    fileio.use_options(["--s3_endpoint_url=http://127.0.0.1:9", "--s3_access_key_id=testing"])
    try:
        with pytest.raises(S3SettingsError, match="missing: aws_secret_access_key .*together"):
            fileio.open_read("s3://bucket/x.jsonl")
    finally:
        fileio.set_options(None)
