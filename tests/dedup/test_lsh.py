import pytest

from dedup.lsh import (
    S_CURVE_SIMILARITIES,
    bands_rows_for_threshold,
    curve_threshold,
    detection_probability,
    s_curve,
)


def test_detection_probability_matches_the_formula_and_is_monotone():
    assert detection_probability(0.8, 14, 8) == pytest.approx(1 - (1 - 0.8**8) ** 14)
    curve = [detection_probability(s, 14, 8) for s in S_CURVE_SIMILARITIES]
    assert curve == sorted(curve) and curve[0] < 0.06 and curve[-1] > 0.999


def test_s_curve_table_covers_half_to_095():
    table = s_curve(14, 8)
    assert list(table) == ["0.50", "0.55", "0.60", "0.65", "0.70", "0.75", "0.80", "0.85", "0.90", "0.95"]
    assert table["0.85"] == pytest.approx(0.9884, abs=1e-4)


def test_bands_rows_follow_the_target_threshold():
    for target in (0.5, 0.7, 0.8, 0.9):
        bands, rows = bands_rows_for_threshold(target, 112)
        assert bands * rows <= 112
        assert abs(curve_threshold(bands, rows) - target) < 0.1
    assert bands_rows_for_threshold(0.9, 112)[1] > bands_rows_for_threshold(0.5, 112)[1]
    with pytest.raises(ValueError):
        bands_rows_for_threshold(1.0)
