"""perflow.explain, calibrate, compare_measured and plot against the CLI: the golden cases'
inputs give the same text, numbers and pictures, and the same errors (an OptionError's field
named as the keyword argument)."""
import csv
import json
import struct
import subprocess

import pytest

import perflow


@pytest.fixture
def golden(source_dir):
    return source_dir / "tests" / "golden"


def expected(case, name="expected.stdout"):
    return (case / name).read_text()


def cli_message(case):
    """The golden case's error as the exception carries it (no `perflow: error: ` prefix)."""
    return expected(case, "expected.stderr").removeprefix("perflow: error: ").removesuffix("\n")


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return f"{width}x{height}"


# ---------------------------------------------------------------------------------------------
# explain

def test_explain_is_the_cli_text(golden, monkeypatch):
    case = golden / "explain_llama3_70b_h100_a100"
    monkeypatch.chdir(case)
    config = "../../../examples/llama3_70b_h100_a100.json"
    explanation = perflow.explain(config)
    assert isinstance(explanation, perflow.Explanation)
    assert explanation.text == expected(case)
    assert str(explanation) == explanation.text
    assert explanation.text.startswith(
        "model      llama3-70b: 80 layers, hidden 8192, ffn 28672, heads 64 (kv 8), vocab "
        "128256, sequence 8192, swiglu; 70.55B parameters\n")
    # The text does not name the file: a dict or a Config explains the same.
    with open(config) as f:
        assert perflow.explain(json.load(f)).text == expected(case)
    assert perflow.explain(perflow.load_config(config)).text == expected(case)


def test_explain_with_set_is_the_changed_config(golden, monkeypatch):
    monkeypatch.chdir(golden / "explain_llama3_70b_h100_a100")
    config = "../../../examples/llama3_70b_h100_a100.json"
    text = perflow.explain(config, set={"/training/global_batch_size": 256}).text
    assert "global batch 256 (32 microbatches)" in text


def test_explain_without_model_is_the_cli_error(golden, monkeypatch):
    case = golden / "error_explain_without_model"
    monkeypatch.chdir(case)
    with pytest.raises(perflow.ConfigError) as e:
        perflow.explain("../../../examples/1f1b.json")
    assert str(e.value) == cli_message(case)
    assert e.value.file == "../../../examples/1f1b.json"


# ---------------------------------------------------------------------------------------------
# calibrate

def test_calibrate_is_the_cli_text_and_json(golden, monkeypatch):
    monkeypatch.chdir(golden / "calibrate_h100")
    calibration = perflow.calibrate("config.json", "measured.json")
    assert isinstance(calibration, perflow.Calibration)
    assert calibration.text == expected(golden / "calibrate_h100")
    assert str(calibration) == calibration.text
    assert calibration.json() == json.loads(expected(golden / "calibrate_h100_json"))
    [fit] = calibration.device_types
    assert fit.device_type == "h100-sxm"
    assert fit.observations == 4
    assert fit.gemm_efficiency_before == 0.66
    assert fit.gemm_efficiency == 0.542
    assert fit.mean_error_before == 0.13358340453366135
    assert fit.mean_error_after == 0.0016076228135356785
    assert (calibration.config_file, calibration.measured_file) == ("config.json",
                                                                    "measured.json")


def test_calibrate_errors_name_the_file(golden, monkeypatch):
    monkeypatch.chdir(golden / "calibrate_h100")
    with pytest.raises(perflow.ConfigError) as e:
        perflow.calibrate("measured.json", "measured.json")
    assert e.value.file == "measured.json"
    assert str(e.value).startswith("measured.json: calibrate fits a /model config's GPUs")
    with open("measured.json") as f:
        more = json.load(f)
    more["pipeline"]["stages"] = 3
    with pytest.raises(perflow.ConfigError) as e:
        perflow.calibrate("config.json", more)
    assert e.value.pointer == "/pipeline"
    assert str(e.value) == "<dict>:/pipeline: measured 3 stages x 1 chunks; config.json has 2 x 1"


# ---------------------------------------------------------------------------------------------
# compare_measured

PIPELINING = ["../costs_torch_pipelining/rank-0.json", "../costs_torch_pipelining/rank-1.json"]
DDP = "../../data/profiles/kineto/hta_a100_ddp2_nccl_data_rank0.json.gz"


def test_compare_measured_is_the_cli_text(golden, monkeypatch):
    case = golden / "compare_measured_torch_pipelining"
    monkeypatch.chdir(case)
    comparison = perflow.compare_measured("config.json", PIPELINING)
    assert isinstance(comparison, perflow.MeasuredComparison)
    assert comparison.text == expected(case)
    assert str(comparison) == comparison.text
    assert comparison.predicted_step_ns == 31417402
    assert comparison.measured_step_ns == 31417402
    assert comparison.steady_iterations == 1
    assert comparison.markers == "torch-pipelining"
    assert comparison.marker_choice == \
        "torch-pipelining (detected: the preset matching the most ranges, 24)"
    assert comparison.stages == [
        {"stage": 0, "predicted_busy_ns": 26793500, "measured_busy_ns": 26793500,
         "predicted_idle_ns": 4623902},
        {"stage": 1, "predicted_busy_ns": 27207360, "measured_busy_ns": 27207360,
         "predicted_idle_ns": 4210042},
    ]


def test_compare_measured_json_is_the_cli_json(golden, monkeypatch):
    monkeypatch.chdir(golden / "compare_measured_ddp")
    comparison = perflow.compare_measured("config.json", DDP, preset="ddp")
    assert comparison.text == expected(golden / "compare_measured_ddp")
    document = json.loads(expected(golden / "compare_measured_ddp_json"))
    # The golden case names the config from its own directory.
    document["config"] = "config.json"
    assert comparison.json() == document
    assert document["timeline"] is None


def test_compare_measured_picture_is_the_cli_timeline(golden, cli, tmp_path, monkeypatch):
    case = golden / "compare_measured_torch_pipelining"
    monkeypatch.chdir(case)
    comparison = perflow.compare_measured("config.json", PIPELINING)
    png = tmp_path / "timelines.png"
    comparison.save(png)
    assert png_size(png.read_bytes()) == \
        expected(golden / "compare_measured_timeline_png", "expected.png.timelines.png").strip()
    assert png_size(comparison.to_png()) == png_size(png.read_bytes())
    svg = tmp_path / "cli.svg"
    result = subprocess.run([cli, "compare-measured", "config.json", *PIPELINING, "--timeline",
                             str(svg)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == comparison.text + f"timelines written to {svg}\n"
    assert comparison.to_svg() == svg.read_text()
    comparison.save(tmp_path / "mine.svg")
    assert (tmp_path / "mine.svg").read_text() == svg.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cli.svg", "mine.svg", "timelines.png"]


def test_compare_measured_errors(golden, monkeypatch):
    monkeypatch.chdir(golden / "compare_measured_torch_pipelining")
    with pytest.raises(perflow.OptionError) as e:
        perflow.compare_measured("config.json", PIPELINING, rank_stage="0=1,0=0")
    assert e.value.field == "rank_stage"
    assert str(e.value) == "rank_stage='0=0': rank 0 is given twice"
    with pytest.raises(perflow.OptionError) as e:
        perflow.compare_measured("config.json", PIPELINING, preset="ddp", pattern="x")
    assert e.value.field == "preset"
    assert str(e.value) == "preset excludes pattern"
    with pytest.raises(perflow.ProfileError):
        perflow.compare_measured("config.json", "missing.json")
    with pytest.raises(ValueError, match="^paths: expected at least one profile$"):
        perflow.compare_measured("config.json", [])


def test_costs_pattern_is_linear_time(golden, monkeypatch):
    """Issue 35: std::regex overflowed the stack on a 30,000-character name (the interpreter
    died) and backtracked for minutes on `(a*)*b`; RE2 returns at once."""
    monkeypatch.chdir(golden / "error_measured_pattern_backtracking")
    corpus = golden.parent / "fuzz" / "corpus" / "kineto"
    costs = perflow.costs(str(corpus / "pattern_long_name.json"), pattern="(?<kind>F)(a|b)*")
    assert costs["costs"] == {"forward": "5us", "backward": "0us", "weight": "0us"}
    with pytest.raises(perflow.Error) as e:
        perflow.costs("../../fuzz/corpus/kineto/pattern_backtracking.json",
                      pattern="(?<kind>F)(a*)*b")
    assert str(e.value) == cli_message(golden / "error_measured_pattern_backtracking")


# ---------------------------------------------------------------------------------------------
# plot

def test_plot_is_the_cli_chart(golden, tmp_path, monkeypatch):
    case = golden / "plot_svg"
    monkeypatch.chdir(case)
    chart = perflow.plot("results.csv", x="/pipeline/microbatches", y="makespan_ns",
                         by="/pipeline/schedule")
    assert isinstance(chart, perflow.Plot)
    # The CLI prints the caption, then where it wrote the chart.
    assert expected(case) == f"{chart.caption}\nchart written to @OUT@/chart.svg\n"
    assert chart.caption == "6 of 6 rows plotted"
    assert str(chart) == chart.caption
    assert chart.title == "makespan_ns vs /pipeline/microbatches, by /pipeline/schedule"
    assert chart.categories == []
    assert list(chart.series) == ["1f1b", "zbv"]
    assert [x for x, _ in chart.series["1f1b"]] == [4.0, 8.0, 9.0]
    assert chart.series["1f1b"][0] == (4.0, 28000000.0)
    assert chart.to_svg() == expected(case, "expected.out.chart.svg")
    chart.save(tmp_path / "chart.svg")
    assert (tmp_path / "chart.svg").read_text() == expected(case, "expected.out.chart.svg")
    chart.save(tmp_path / "chart.png")
    assert png_size((tmp_path / "chart.png").read_bytes()) == png_size(chart.to_png())


def test_plot_series_are_the_csv_means(golden, monkeypatch):
    monkeypatch.chdir(golden / "plot_svg")
    with open("results.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    x, y, by = (header.index(c) for c in
                ("/pipeline/microbatches", "makespan_ns", "/pipeline/schedule"))
    chart = perflow.plot("results.csv", "/pipeline/microbatches", "makespan_ns",
                         "/pipeline/schedule")
    for name, points in chart.series.items():
        assert points == sorted((float(r[x]), float(r[y])) for r in rows if r[by] == name)


def test_plot_column_error_names_the_field(golden, monkeypatch):
    case = golden / "error_plot_column"
    monkeypatch.chdir(case)
    with pytest.raises(perflow.OptionError) as e:
        perflow.plot("results.csv", x="/pipeline/microbatch", y="makespan_ns")
    assert e.value.field == "x"
    # The CLI's message, the field named as the keyword argument.
    assert str(e.value) == cli_message(case).replace("--x '/pipeline/microbatch'",
                                                     "x='/pipeline/microbatch'")
    with pytest.raises(TypeError, match="^y: expected a column name"):
        perflow.plot("results.csv", x="/pipeline/microbatches", y=3)
    with pytest.raises(perflow.Error, match="^missing.csv: cannot open the file for reading$"):
        perflow.plot("missing.csv", x="a", y="b")
