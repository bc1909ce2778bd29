"""ESPHome's sensor filters: each against a worked example, with ESPHome's defaults."""

from __future__ import annotations

import math
from typing import Any

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.peripherals.sensors.filter_config import build_chain, build_filter
from clawseed_edge.peripherals.sensors.filters import FilterChain, FilterInvalid, parse_seconds
from clawseed_edge.testing.sensors import sim_sensor_bank


def run(
    entry: dict[str, Any], values: list[float], *, step: float = 1.0, decimals: int = 1
) -> list[Any]:
    """Feed ``values`` one per ``step`` seconds; one list of outputs per input."""
    chain = build_chain([entry], decimals=decimals)
    return [chain.feed(v, i * step) for i, v in enumerate(values)]


def flat(outs: list[list[float]]) -> list[float]:
    return [round(v, 6) for o in outs for v in o]


def test_offset_and_multiply() -> None:
    assert flat(run({"offset": -0.4}, [20.0, 21.5])) == [19.6, 21.1]
    assert flat(run({"multiply": 1.8}, [10.0, -5.0])) == [18.0, -9.0]


def test_calibrate_linear_two_points_is_the_line_through_them() -> None:
    assert flat(run({"calibrate_linear": [[0.0, 0.0], [10.0, 12.0]]}, [5.0, 20.0])) == [6.0, 24.0]


def test_calibrate_linear_esphome_arrow_strings() -> None:
    assert flat(run({"calibrate_linear": ["0.0 -> 1.0", "2.0 -> 5.0"]}, [1.0])) == [3.0]


def test_calibrate_linear_least_squares_over_three_points() -> None:
    # (0,0) (1,1) (2,3): slope 1.5, intercept -1/6
    out = flat(run({"calibrate_linear": [[0, 0], [1, 1], [2, 3]]}, [4.0]))
    assert out == [round(1.5 * 4 - 1 / 6, 6)]


def test_calibrate_linear_exact_is_piecewise_and_extrapolates() -> None:
    entry = {"calibrate_linear": {"datapoints": [[0, 0], [10, 100], [20, 120]], "method": "exact"}}
    assert flat(run(entry, [5.0, 15.0, 30.0, -10.0])) == [50.0, 110.0, 140.0, -100.0]


def test_clamp_limits_or_drops() -> None:
    entry: dict[str, Any] = {"clamp": {"min_value": 0, "max_value": 100}}
    assert flat(run(entry, [-3.0, 50.0, 130.0])) == [0.0, 50.0, 100.0]
    entry["clamp"]["ignore_out_of_range"] = True
    assert flat(run(entry, [-3.0, 50.0, 130.0])) == [50.0]


def test_round_halves_away_from_zero_as_esphome() -> None:
    assert flat(run({"round": 1}, [21.449, 21.451])) == [21.4, 21.5]
    assert flat(run({"round": 0}, [2.5, -2.5])) == [3.0, -3.0]


def test_median_defaults_window_5_send_every_5_first_at_once() -> None:
    outs = run({"median": {}}, [10.0, 1.0, 2.0, 30.0, 3.0, 4.0, 5.0])
    # send_first_at 1: the first value goes out alone; then every 5th: median(10,1,2,30,3,4)...
    assert outs[0] == [10.0]
    assert outs[1:5] == [[], [], [], []]
    assert outs[5] == [3.0]  # window (last 5): 1, 2, 30, 3, 4
    assert outs[6] == []


def test_median_even_window_averages_the_middle_two() -> None:
    outs = run({"median": {"window_size": 4, "send_every": 4, "send_first_at": 4}}, [1, 9, 3, 5])
    assert outs[-1] == [4.0]


def test_min_max_defaults() -> None:
    values = [5.0, 7.0, 1.0, 9.0, 3.0, 4.0]
    assert flat(run({"min": {}}, values)) == [5.0, 1.0]
    assert flat(run({"max": {}}, values)) == [5.0, 9.0]


def test_quantile_default_0_9() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    # window 5: ceil(5 * 0.9) - 1 = 4 -> the largest
    outs = run({"quantile": {"send_first_at": 5}}, values)
    assert outs[-1] == [5.0]
    outs = run({"quantile": {"send_first_at": 5, "quantile": 0.5}}, values)
    assert outs[-1] == [3.0]


def test_sliding_window_moving_average_issue_example() -> None:
    entry = {"sliding_window_moving_average": {"window_size": 3, "send_every": 1}}
    assert flat(run(entry, [3.0, 6.0, 9.0, 12.0])) == [3.0, 4.5, 6.0, 9.0]


def test_sliding_window_moving_average_defaults_15() -> None:
    outs = run({"sliding_window_moving_average": {}}, [float(i) for i in range(16)])
    assert outs[0] == [0.0]
    assert all(o == [] for o in outs[1:15])
    assert outs[15] == [8.0]  # mean of 1..15


def test_window_filters_skip_nan() -> None:
    outs = run(
        {"median": {"window_size": 3, "send_every": 3, "send_first_at": 3}}, [1.0, math.nan, 3.0]
    )
    assert outs[-1] == [2.0]


def test_exponential_moving_average() -> None:
    entry = {"exponential_moving_average": {"alpha": 0.5, "send_every": 1}}
    assert flat(run(entry, [10.0, 20.0, 20.0])) == [10.0, 15.0, 17.5]
    # defaults: alpha 0.1, send_every 15 (first at once)
    outs = run({"exponential_moving_average": {}}, [10.0] + [20.0] * 15)
    assert outs[0] == [10.0] and all(o == [] for o in outs[1:15])
    assert outs[15] == [pytest.approx(20 - 10 * 0.9**15)]


def test_throttle_passes_the_first_then_one_per_period() -> None:
    outs = run({"throttle": "10s"}, [1.0, 2.0, 3.0, 4.0, 5.0], step=4.0)  # t = 0, 4, 8, 12, 16
    assert flat(outs) == [1.0, 4.0]


def test_throttle_average_sends_the_mean_each_period() -> None:
    chain = build_chain([{"throttle_average": "10s"}])
    assert chain.feed(2.0, 0.0) == []
    assert chain.deadline() == 10.0
    assert chain.feed(4.0, 5.0) == []
    assert chain.tick(10.0) == [3.0]
    assert chain.tick(20.0) == []  # nothing came: nothing goes
    assert chain.feed(math.nan, 21.0) == []
    assert math.isnan(chain.tick(30.0)[0])  # only NaN came: NaN goes


def test_delta_first_passes_then_strictly_more_than_delta() -> None:
    outs = run({"delta": 0.5}, [20.0, 20.3, 20.5, 20.6, 20.0])
    assert flat(outs) == [20.0, 20.6, 20.0]


def test_delta_percentage() -> None:
    assert flat(run({"delta": "10%"}, [100.0, 105.0, 111.0, 102.0, 99.0])) == [100.0, 111.0, 99.0]


def test_heartbeat_resends_the_last_value_each_period() -> None:
    chain = build_chain([{"heartbeat": "60s"}])
    assert chain.feed(5.0, 0.0) == []
    assert chain.feed(6.0, 30.0) == []
    assert chain.tick(60.0) == [6.0]
    assert chain.tick(100.0) == []
    assert chain.tick(120.0) == [6.0]
    assert build_chain([{"heartbeat": {"period": "60s", "optimistic": True}}]).feed(5.0, 0) == [5.0]


def test_timeout_sends_nan_once_when_values_stop() -> None:
    chain = build_chain([{"timeout": "5min"}])
    assert chain.feed(3.0, 0.0) == [3.0]
    assert chain.deadline() == 300.0
    assert chain.tick(299.0) == []
    out = chain.tick(300.0)
    assert len(out) == 1 and math.isnan(out[0])
    assert chain.tick(900.0) == [] and chain.deadline() is None


def test_timeout_with_a_value_or_last() -> None:
    chain = build_chain([{"timeout": {"timeout": "1min", "value": 0}}])
    chain.feed(3.0, 0.0)
    assert chain.tick(60.0) == [0.0]
    chain = build_chain([{"timeout": {"timeout": "1min", "value": "last"}}])
    chain.feed(3.0, 0.0)
    assert chain.tick(60.0) == [3.0]


def test_filter_out_compares_at_the_quantitys_decimals() -> None:
    assert flat(run({"filter_out": 85.0}, [85.0, 85.04, 21.0])) == [21.0]
    assert flat(run({"filter_out": [85.0, "nan"]}, [math.nan, 85.0, 1.0])) == [1.0]


def test_chain_runs_in_order_and_timed_output_goes_down_the_chain() -> None:
    chain = build_chain([{"throttle_average": "10s"}, {"offset": 1.0}, {"round": 0}])
    chain.feed(1.0, 0.0)
    chain.feed(2.0, 1.0)
    assert chain.feed(9.0, 10.0) == [3.0]  # what is due first (mean 1.5 + 1, rounded), then 9 in
    assert chain.tick(20.0) == [10.0]


def test_empty_chain_passes_everything() -> None:
    assert FilterChain().feed(1.5, 0) == [1.5]


@pytest.mark.parametrize(
    ("entry", "message", "key"),
    [
        ({"medain": {}}, "unknown filter 'medain'", ""),
        (
            {"median": {"window_size": 0}},
            "window_size: expected a whole number 1..1000",
            "median.window_size",
        ),
        (
            {"median": {"send_every": 2, "send_first_at": 3}},
            "send_first_at (3)",
            "median.send_first_at",
        ),
        ({"median": {"size": 3}}, "unknown key 'size'", "median.size"),
        ({"throttle": "fast"}, "'fast' is not a duration", "throttle"),
        ({"delta": -1}, "must be a number >= 0", "delta"),
        ({"calibrate_linear": [[1, 2]]}, "at least two datapoints", "calibrate_linear"),
        ({"offset": 1, "multiply": 2}, "a table with one key", ""),
    ],
)
def test_bad_filters_say_what_and_where(entry: Any, message: str, key: str) -> None:
    with pytest.raises(FilterInvalid) as info:
        build_filter(entry)
    assert message in str(info.value)
    assert info.value.key == key


def test_durations() -> None:
    assert parse_seconds("500ms", "x") == 0.5
    assert parse_seconds("5min", "x") == parse_seconds("5m", "x") == 300
    assert parse_seconds(60, "x") == 60


# --- in the config --------------------------------------------------------------------------


def test_config_takes_filters_intervals_and_per_quantity_filters() -> None:
    bank = sim_sensor_bank(
        '[[sensors]]\nname = "g"\ndriver = "bme280"\nupdate_interval = "30s"\n'
        "filters = [{ skip_initial = 1 }]\nfilters_humidity = [{ multiply = 2 }]\n"
        "filters_temperature = [{ offset = -0.5 }]\n"
    )
    valid = bank.sensor("g")
    assert valid.interval_s == 30.0
    chains = valid.chains()
    assert chains["temperature"].feed(20.0, 0) == [19.5]  # only the quantity it names
    assert chains["humidity"].feed(20.0, 0) == [40.0]  # its own list instead of filters
    assert chains["pressure"].feed(1000.0, 0) == []  # the shared list: skip_initial
    assert chains["pressure"].feed(1000.0, 1) == [1000.0]


def test_default_interval_is_esphomes_60s_and_never_means_on_demand() -> None:
    toml = '[[sensors]]\nname = "g"\ndriver = "bme280"\n'
    assert sim_sensor_bank(toml).sensor("g").interval_s == 60.0
    never = sim_sensor_bank(toml + 'update_interval = "never"\n')
    assert never.sensor("g").interval_s is None


def test_config_error_names_the_file_and_the_filter_key() -> None:
    with pytest.raises(ConfigInvalid) as info:
        sim_sensor_bank(
            '[[sensors]]\nname = "g"\ndriver = "bme280"\nfilters = [{ median = {} }, { median = { window_size = 0 } }]\n',
            source="cfg.toml",
        )
    assert str(info.value).startswith("cfg.toml: sensors[0].filters[1].median.window_size: 'g': ")


def test_unknown_quantity_and_bad_interval() -> None:
    with pytest.raises(ConfigInvalid, match=r"sensors\[0\]\.filters_temp: 'g': bme280 measures"):
        sim_sensor_bank('[[sensors]]\nname = "g"\ndriver = "bme280"\nfilters_temp = []\n')
    with pytest.raises(ConfigInvalid, match=r"sensors\[0\]\.update_interval: .*or 'never'"):
        sim_sensor_bank('[[sensors]]\nname = "g"\ndriver = "bme280"\nupdate_interval = "soon"\n')


def test_whole_config_file_accepts_per_quantity_filters(tmp_path: Any) -> None:
    from clawseed_edge.config import load_config

    path = tmp_path / "config.toml"
    path.write_text(
        '[[sensors]]\nname = "g"\ndriver = "bme280"\nfilters_temperature = [{ offset = 1.0 }]\n'
    )
    loaded = load_config(path)
    assert loaded.config.sensors[0].quantity_filters == {"temperature": [{"offset": 1.0}]}


# --- issue 36: ESPHome's documented sequences ---------------------------------------------
# Each expected list is written from ESPHome's filter documentation (esphome.io, sensor
# filters), not from our code.

NAN = math.nan


def same(a: list[float], b: list[float]) -> bool:
    """Equal lists where NaN equals NaN."""
    return len(a) == len(b) and all(
        (math.isnan(x) and math.isnan(y)) or round(x, 6) == round(y, 6)
        for x, y in zip(a, b, strict=True)
    )


def test_delta_passes_nan_once_after_a_number_and_not_a_first_or_repeated_nan() -> None:
    out = flat(run({"delta": 1.0}, [NAN, 20.0, 20.5, NAN, NAN, 20.5, 22.0]))
    assert same(out, [20.0, NAN, 20.5, 22.0])


def test_a_timeout_then_delta_chain_reports_a_dead_sensor() -> None:
    chain = build_chain([{"timeout": "5min"}, {"delta": 0.5}])
    assert chain.feed(20.0, 0.0) == [20.0]
    assert chain.feed(20.1, 60.0) == []  # within the delta
    out = chain.tick(60.0 + 300.0)  # no value for 5 minutes: the timeout's NaN
    assert len(out) == 1 and math.isnan(out[0])
    assert chain.feed(20.1, 400.0) == [20.1]  # back: the first value after NaN passes


def test_delta_min_max_and_baseline() -> None:
    # Outlier rejection: more than 0.1 and at most 5 from the last passed value.
    out = flat(run({"delta": {"min_value": 0.1, "max_value": 5}}, [20, 20.05, 20.5, 90, 21]))
    assert out == [20.0, 20.5, 21.0]
    # A fixed baseline: values more than 2 away from 50 pass.
    out = flat(run({"delta": {"min_value": 2, "baseline": 50}}, [51, 49, 53, 47.5, 50]))
    assert out == [51.0, 53.0, 47.5]
    # Percentages of the baseline, min and max.
    out = flat(run({"delta": {"min_value": "10%", "max_value": "50%"}}, [100, 105, 120, 200]))
    assert out == [100.0, 120.0]
    with pytest.raises(FilterInvalid, match="min_value, max_value or both"):
        build_filter({"delta": {"baseline": 1}})


def test_throttle_average_and_heartbeat_count_from_the_start_not_the_first_value() -> None:
    chain = build_chain([{"throttle_average": "10s"}])
    chain.start(0.0)
    assert chain.feed(1.0, 7.0) == [] and chain.feed(3.0, 8.0) == []
    assert chain.tick(10.0) == [2.0]  # the first period ends 10 s after the start, not at 17 s
    beat = build_chain([{"heartbeat": "10s"}])
    beat.start(0.0)
    assert beat.deadline() == 10.0
    assert beat.feed(5.0, 9.0) == []
    assert beat.tick(10.0) == [5.0] and beat.tick(20.0) == [5.0]


def test_or_passes_what_any_passes_once_per_value() -> None:
    # ESPHome's example: throttle 1s or delta 5.0.
    entry = {"or": [{"throttle": "1s"}, {"delta": 5.0}]}
    out = run(entry, [10.0, 11.0, 20.0, 21.0, 22.0], step=0.4)
    # t=0 both pass (once); 0.4 neither; 0.8 delta; 1.2 throttle; 1.6 neither.
    assert out == [[10.0], [], [20.0], [21.0], []]


def test_debounce_sends_the_last_value_once_it_settles() -> None:
    chain = build_chain([{"debounce": "1s"}])
    assert chain.feed(1.0, 0.0) == [] and chain.feed(2.0, 0.5) == []
    assert chain.tick(1.2) == []  # 2.0 came 0.7 s ago
    assert chain.tick(1.5) == [2.0] and chain.tick(3.0) == []


def test_skip_initial_drops_the_first_n() -> None:
    assert flat(run({"skip_initial": 2}, [85.0, 85.0, 21.0, 22.0])) == [21.0, 22.0]


def test_round_to_multiple_of_as_remainderf() -> None:
    out = flat(run({"round_to_multiple_of": 0.5}, [21.2, 21.3, 21.75, -0.3]))
    assert out == [21.0, 21.5, 22.0, -0.5]  # 21.75 is a half: to the even multiple, 22.0
    assert flat(run({"round_to_multiple_of": {"multiple": 10}}, [1234.0])) == [1230.0]


def test_calibrate_polynomial_fits_the_datapoints() -> None:
    # y = 1 + 2x + 3x^2 exactly through three points: degree 2 reproduces it.
    entry = {"calibrate_polynomial": {"datapoints": [[0, 1], [1, 6], [2, 17]], "degree": 2}}
    assert flat(run(entry, [3.0, -1.0])) == [34.0, 2.0]
    with pytest.raises(FilterInvalid, match="needs at least 3 datapoints"):
        build_filter({"calibrate_polynomial": {"datapoints": [[0, 0], [1, 1]], "degree": 2}})


@pytest.mark.parametrize(
    ("points", "message"),
    [([[10, 1], [0, 0]], "x must rise"), ([[0, 0], [0, 1], [5, 5]], "appears twice")],
)
def test_exact_calibrate_linear_refuses_unsorted_or_duplicate_x(points: Any, message: str) -> None:
    with pytest.raises(FilterInvalid, match=message):
        build_filter({"calibrate_linear": {"datapoints": points, "method": "exact"}})


def test_a_bme280s_offset_is_per_quantity_and_a_shared_one_is_a_clear_error() -> None:
    with pytest.raises(ConfigInvalid) as info:
        sim_sensor_bank(
            '[[sensors]]\nname = "g"\ndriver = "bme280"\nfilters = [{ offset = -0.4 }]\n'
        )
    message = str(info.value)
    assert "sensors[0].filters[0]" in message and "filters_temperature" in message
    for unitless in ("{ median = {} }", '{ delta = "5%" }', '{ throttle = "60s" }'):
        sim_sensor_bank(f'[[sensors]]\nname = "g"\ndriver = "bme280"\nfilters = [{unitless}]\n')
    # One quantity: the shared list is that quantity's, as before.
    sim_sensor_bank('[[sensors]]\nname = "t"\ndriver = "ds18b20"\nfilters = [{ offset = -0.4 }]\n')
