import numpy as np
import pytest

from pipeline.arrays import sorted_unique


@pytest.mark.parametrize("dtype", [np.uint64, np.uint32, np.int64])
@pytest.mark.parametrize("size", [0, 1, 2, 1000])
def test_sorted_unique_is_np_unique(dtype, size):
    rng = np.random.default_rng(size)
    values = rng.integers(0, max(size // 3, 1), size).astype(dtype)
    got = sorted_unique(values)
    assert got.dtype == values.dtype and np.array_equal(got, np.unique(values))


def test_sorted_unique_leaves_its_input_as_it_was():
    values = np.array([[3, 1], [3, 2]], dtype=np.uint64)
    assert sorted_unique(values).tolist() == [1, 2, 3]
    assert values.tolist() == [[3, 1], [3, 2]]
