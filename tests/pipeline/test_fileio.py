"""pipeline.fileio on local paths (the same calls on s3:// are in test_s3.py)."""

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
