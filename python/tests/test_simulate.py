"""perflow.simulate against the CLI: the same report, byte for byte."""
import json
import pathlib
import subprocess

import pytest

import perflow

EXAMPLES = ["1f1b.json", "heterogeneous_zbv.json", "llama3_70b_h100.json",
            "deepseek_v3_dualpipe.json", "make_it_fit/offload.json"]


def cli_report(cli, config, tmp_path):
    out = tmp_path / "report.json"
    subprocess.run([cli, "simulate", str(config), "--report", str(out)], check=True,
                   capture_output=True)
    return out.read_text()


@pytest.mark.parametrize("example", EXAMPLES)
def test_report_equals_the_cli(example, source_dir, cli, tmp_path):
    path = source_dir / "examples" / example
    expected = cli_report(cli, path, tmp_path)
    assert perflow.simulate_json(path) == expected
    assert perflow.simulate_json(str(path)) == expected
    report = perflow.simulate(path)
    # The objects, written as the CLI writes them, are the same bytes.
    assert json.dumps(report, indent=1, ensure_ascii=False) + "\n" == expected


def test_config_as_dict_and_text(source_dir, cli, tmp_path):
    path = source_dir / "examples" / "1f1b.json"
    document = json.loads(path.read_text())
    expected = perflow.simulate(path)
    assert perflow.simulate(document) == expected
    assert perflow.simulate(json.dumps(document)) == expected
    assert perflow.summary(document).startswith("run            1f1b, ")


def test_errors_carry_the_file_and_pointer(tmp_path):
    bad = {"pipeline": {"schedule": "1f1b", "stages": 0, "microbatches": 8},
           "costs": {"forward": 1, "backward": 1, "weight": 1}}
    with pytest.raises(perflow.ConfigError) as e:
        perflow.simulate(bad)
    assert str(e.value) == "<dict>:/pipeline/stages: expected an integer in [1, 65536], got 0"
    assert isinstance(e.value, perflow.Error)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(perflow.ConfigError, match=r"bad\.json:/pipeline/stages: expected"):
        perflow.simulate(path)
    with pytest.raises(TypeError):
        perflow.simulate(42)


def test_schedules_equal_the_cli(cli):
    listed = json.loads(subprocess.run([cli, "schedules", "--format", "json"], check=True,
                                       capture_output=True, text=True).stdout)
    assert perflow.schedules() == listed
    assert "dualpipe" in [s["name"] for s in perflow.schedules()]


def test_load_config_with_overrides_is_the_cli_set(source_dir, cli, tmp_path):
    path = source_dir / "examples" / "heterogeneous_zbv.json"
    out = tmp_path / "report.json"
    subprocess.run([cli, "simulate", str(path), "--set", "/pipeline/microbatches=16",
                    "--set", "/pipeline/schedule=zbv-auto", "--report", str(out)],
                   check=True, capture_output=True)
    config = perflow.load_config(path, set={"/pipeline/microbatches": 16,
                                            "/pipeline/schedule": "zbv-auto"})
    assert (config.schedule, config.stages, config.microbatches, config.chunks) == \
        ("zbv-auto", 8, 16, 2)
    assert config.file == str(path)
    assert perflow.simulate_json(config) == out.read_text()
    assert perflow.simulate_json(path, set=["/pipeline/microbatches=16",
                                            "/pipeline/schedule=zbv-auto"]) == out.read_text()
    assert perflow.load_config(config) is config
    with pytest.raises(TypeError, match="already checked"):
        perflow.load_config(config, set={"/pipeline/stages": 4})
    with pytest.raises(TypeError, match="^set: expected a dict"):
        perflow.load_config(path, set="/pipeline/stages=4")


def test_errors_name_the_override_and_the_text():
    document = {"pipeline": {"schedule": "1f1b", "stages": 4, "microbatches": 8},
                "costs": {"forward": 1, "backward": 1, "weight": 1}}
    with pytest.raises(perflow.ConfigError) as e:
        perflow.load_config(document, set={"/pipeline/stages": 0})
    assert str(e.value) == ("<dict>:/pipeline/stages: expected an integer in [1, 65536], got 0 "
                            "(set by the override '/pipeline/stages=0')")
    assert (e.value.file, e.value.pointer) == ("<dict>", "/pipeline/stages")
    assert isinstance(e.value, ValueError)
    with pytest.raises(perflow.ConfigError, match=r"^<string>:.*line 1"):
        perflow.load_config('{"pipeline": ')
    with pytest.raises(perflow.ConfigError, match="no-such.json"):
        perflow.load_config("no-such.json")
