"""perflow.costs, sweep and search against the CLI: the same files, rows and plans, byte for
byte, and the same error messages."""
import json
import re
import subprocess
import warnings

import pytest

import perflow
from perflow import _perflow
from perflow._explore import costs, costs_json, search, sweep


def run_cli(cli, args, cwd=None):
    return subprocess.run([cli, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def cli_error(result, replace=()):
    """The CLI's message as a Python exception carries it: without the `perflow: error: `
    prefix and CLI11's pointer to --help."""
    assert result.returncode == 2, result
    message = result.stderr.removeprefix("perflow: error: ").removesuffix("\n")
    message = message.removesuffix(" (run 'perflow --help')")
    for old, new in replace:
        message = message.replace(old, new)
    return message


# ---------------------------------------------------------------------------------------------
# costs

@pytest.fixture
def pipelining(source_dir):
    """Two ranks of a torch.distributed.pipelining run (the golden costs_* cases)."""
    folder = source_dir / "tests" / "golden" / "costs_torch_pipelining"
    return [folder / "rank-0.json", folder / "rank-1.json"]


@pytest.fixture
def ddp(source_dir):
    return source_dir / "tests" / "data" / "profiles" / "kineto" / \
        "hta_a100_ddp2_nccl_data_rank0.json.gz"


# (CLI options, the same as keyword arguments), for the two pipelining profiles.
COSTS_CASES = {
    "measured": ([], {}),
    "rank_stage_list": (["--rank-stage", "0=1,1=0", "--schedule", "gpipe"],
                        {"rank_stage": "0=1,1=0", "schedule": "gpipe"}),
    "rank_stage_dict": (["--rank-stage", "0=1", "--rank-stage", "1=0", "--schedule", "gpipe"],
                        {"rank_stage": {0: 1, 1: 0}, "schedule": "gpipe"}),
    "reshaped": (["--stages", "4", "--microbatches", "8", "--scale", "0.25"],
                 {"stages": 4, "microbatches": 8, "scale": 0.25}),
    "layers": (["--layers-per-stage", "2", "--profiled-layers", "8", "--preset",
                "torch-pipelining"],
               {"layers_per_stage": 2, "profiled_layers": 8, "preset": "torch-pipelining"}),
    "pattern": (["--pattern", r"^PP:(?<stage>\d+)(?<kind>[FIW])(?<mb>\d+)$"],
                {"pattern": r"^PP:(?<stage>\d+)(?<kind>[FIW])(?<mb>\d+)$"}),
}


@pytest.mark.parametrize("case", COSTS_CASES)
def test_costs_json_is_the_cli_file(case, pipelining, cli, tmp_path):
    options, kwargs = COSTS_CASES[case]
    out = tmp_path / "costs.json"
    result = run_cli(cli, ["costs", *pipelining, *options, "-o", out])
    assert result.returncode == 0, result.stderr
    expected = out.read_text()
    assert costs_json(pipelining, **kwargs) == expected
    assert costs([str(p) for p in pipelining], **kwargs) == json.loads(expected)


def test_costs_of_one_profile_with_a_preset(ddp, cli, tmp_path):
    out = tmp_path / "costs.json"
    assert run_cli(cli, ["costs", ddp, "--preset", "ddp", "-o", out]).returncode == 0
    assert costs_json(ddp, preset="ddp") == out.read_text()
    assert costs_json(str(ddp), preset="ddp") == out.read_text()
    assert costs((ddp,), preset="ddp")["parallelism"]["data_parallel"] == 2


def test_costs_notes_are_the_cli_notes(ddp, cli, tmp_path):
    out = tmp_path / "costs.json"
    result = run_cli(cli, ["costs", ddp, "--preset", "ddp", "-o", out, "--format", "json"])
    assert result.returncode == 0, result.stderr
    expected = json.loads(result.stdout)["notes"]
    assert expected  # the DDP profile's kernels have no message sizes: a note says so
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = costs(ddp, preset="ddp")
    assert [str(w.message) for w in caught] == expected
    assert all(w.category is perflow.CostsNote for w in caught)
    assert config == json.loads(out.read_text())


def test_costs_simulate_as_the_cli_file(pipelining, cli, tmp_path):
    out = tmp_path / "costs.json"
    assert run_cli(cli, ["costs", *pipelining, "-o", out]).returncode == 0
    config = costs(pipelining)
    assert perflow.simulate_json(config) == perflow.simulate_json(out)
    assert perflow.simulate(config)["makespan_ns"] == 31417402


def python_words(message):
    """A message as Python words the fields of a perflow.OptionError: the CLI's
    `--rank-stage '0-1'` and `--stages` are `rank_stage='0-1'` and `stages`."""
    return re.sub(r"--([a-z][a-z-]*)(?: ('[^']*'|\d+))?",
                  lambda m: m[1].replace("-", "_") + (f"={m[2]}" if m[2] else ""), message)


# (CLI options, keyword arguments, the exception): the CLI's message, with "<costs>" where the
# CLI names its output file, and an OptionError's fields named as keyword arguments.
COSTS_ERRORS = {
    "stages_zero": (["--stages", "0"], {"stages": 0}, perflow.OptionError),
    "stages_fewer": (["--stages", "1"], {"stages": 1}, perflow.OptionError),
    "microbatches_big": (["--microbatches", "16777217"], {"microbatches": 16777217},
                         perflow.OptionError),
    "scale_negative": (["--scale", "-1"], {"scale": -1}, perflow.OptionError),
    "scale_huge": (["--scale", "2000000"], {"scale": 2e6}, perflow.OptionError),
    "layers_alone": (["--layers-per-stage", "2"], {"layers_per_stage": 2}, perflow.OptionError),
    "profiled_alone": (["--profiled-layers", "8"], {"profiled_layers": 8}, perflow.OptionError),
    "layers_remainder": (["--layers-per-stage", "3", "--profiled-layers", "8"],
                         {"layers_per_stage": 3, "profiled_layers": 8}, perflow.OptionError),
    "unknown_preset": (["--preset", "torch-pipeline"], {"preset": "torch-pipeline"},
                       perflow.UnknownNameError),
    "unknown_schedule": (["--schedule", "zbvv"], {"schedule": "zbvv"},
                         perflow.UnknownNameError),
    "schedule_refuses": (["--schedule", "zbv"], {"schedule": "zbv"}, perflow.Error),
    "nothing_matched": (["--preset", "ddp"], {"preset": "ddp"}, perflow.Error),
    "bad_pattern": (["--pattern", "(?<kind>F"], {"pattern": "(?<kind>F"}, perflow.Error),
    "bad_rank_stage": (["--rank-stage", "0-1"], {"rank_stage": ["0-1"]}, perflow.OptionError),
    "rank_twice": (["--rank-stage", "0=1,0=0"], {"rank_stage": ["0=1", "0=0"]},
                   perflow.OptionError),
    "preset_and_pattern": (["--preset", "ddp", "--pattern", "x"],
                           {"preset": "ddp", "pattern": "x"}, perflow.OptionError),
    "scale_and_layers": (["--scale", "2", "--layers-per-stage", "2"],
                         {"scale": 2, "layers_per_stage": 2}, perflow.OptionError),
}


@pytest.mark.parametrize("case", COSTS_ERRORS)
def test_costs_errors_are_the_cli_messages(case, pipelining, cli, tmp_path):
    options, kwargs, error = COSTS_ERRORS[case]
    out = tmp_path / "costs.json"
    expected = cli_error(run_cli(cli, ["costs", *pipelining, *options, "-o", out]),
                         [(str(out), "<costs>")])
    if error is perflow.OptionError:
        expected = python_words(expected)
    with pytest.raises(error) as e:
        costs_json(pipelining, **kwargs)
    assert str(e.value) == expected
    assert not out.exists()


def test_costs_option_errors_name_their_field(pipelining):
    with pytest.raises(perflow.OptionError) as e:
        costs(pipelining, rank_stage="0-1")
    assert e.value.field == "rank_stage"
    assert str(e.value) == ("rank_stage='0-1': expected RANK=STAGE (whole numbers, stage below "
                            "65536), e.g. 3=1")
    with pytest.raises(perflow.OptionError) as e:
        costs(pipelining, stages=0)
    assert e.value.field == "stages"
    assert str(e.value) == "stages: expected a whole number from 1 to 65536, found '0'"
    with pytest.raises(perflow.OptionError) as e:
        costs(pipelining, layers_per_stage=3, profiled_layers=8)
    assert e.value.field == "layers_per_stage"
    assert str(e.value) == ("layers_per_stage=3: the 8 profiled layers do not split into stages "
                            "of 3 (found a remainder of 2); give stages")
    assert isinstance(e.value, ValueError)


def test_costs_errors_name_the_profile(source_dir, cli, tmp_path):
    saxpy = source_dir / "tests" / "data" / "profiles" / "nsys" / \
        "pipit_saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
    missing = tmp_path / "missing.json"
    for profile, error in [(saxpy, perflow.Error), (missing, perflow.ProfileError)]:
        expected = cli_error(run_cli(cli, ["costs", profile, "-o", tmp_path / "c.json"]))
        with pytest.raises(error) as e:
            costs(profile)
        assert str(e.value) == expected
    assert str(e.value) == f"{missing}: expected a profile file, found no such file"


def test_costs_arguments_are_checked(pipelining):
    with pytest.raises(TypeError, match=r"^paths: expected a profile's path or a list"):
        costs(42)
    with pytest.raises(TypeError, match=r"^paths: expected a path \(str, bytes or "
                                        r"os.PathLike\), found int"):
        costs([pipelining[0], 42])
    with pytest.raises(ValueError, match="^paths: expected at least one profile$"):
        costs([])
    with pytest.raises(TypeError, match=r"^stages: expected a whole number \(int\), found bool$"):
        costs(pipelining, stages=True)
    with pytest.raises(TypeError, match=r"^stages: expected a whole number \(int\), found str$"):
        costs(pipelining, stages="two")
    with pytest.raises(TypeError, match=r"^microbatches: expected a whole number \(int\), "
                                        "found float$"):
        costs(pipelining, microbatches=2.5)
    with pytest.raises(TypeError, match="^scale: expected a number, found str$"):
        costs(pipelining, scale="0.5")
    with pytest.raises(TypeError, match="^schedule: expected a str, found int$"):
        costs(pipelining, schedule=1)
    with pytest.raises(TypeError, match="^rank_stage: expected a dict"):
        costs(pipelining, rank_stage=[(0, 1)])
    # The options the CLI's parser keeps apart are refused by the C++ both faces call.
    with pytest.raises(perflow.OptionError, match="^preset excludes pattern$"):
        costs(pipelining, preset="ddp", pattern="x")
    with pytest.raises(perflow.OptionError, match="^scale excludes layers_per_stage$"):
        costs(pipelining, scale=2, layers_per_stage=4, profiled_layers=8)


# ---------------------------------------------------------------------------------------------
# sweep

@pytest.fixture
def small_sweep(source_dir):
    """An inline base, a zipped pair, a value with a comma and quotes (golden sweep_outputs)."""
    return source_dir / "tests" / "golden" / "sweep_outputs" / "sweep.json"


def cli_jsonl(cli, sweep_file, tmp_path, cwd=None):
    out = tmp_path / f"rows{len(list(tmp_path.glob('rows*.jsonl')))}.jsonl"
    result = run_cli(cli, ["sweep", sweep_file, "--jsonl", out, "--jobs", "2"], cwd=cwd)
    assert result.returncode == 0, result.stderr
    return out.read_text()


def test_sweep_rows_are_the_cli_jsonl(small_sweep, cli, tmp_path):
    expected = cli_jsonl(cli, small_sweep, tmp_path)
    assert _perflow._sweep_jsonl(str(small_sweep), "", True, [], 2) == expected
    rows = [json.loads(line) for line in expected.splitlines()]
    assert sweep(small_sweep) == rows
    assert sweep(str(small_sweep), jobs=1) == rows
    assert [row["run"] for row in rows] == list(range(6))
    assert list(rows[0])[:5] == ["run", "/pipeline/schedule", "/pipeline/chunks",
                                 "/pipeline/microbatches", "/description"]
    # The same sweep as a dict, and as JSON text.
    document = json.loads(small_sweep.read_text())
    assert sweep(document, jobs=2) == rows
    assert sweep(small_sweep.read_text()) == rows


def test_sweep_base_is_relative_to_the_file(source_dir, cli, tmp_path, monkeypatch):
    examples = source_dir / "examples"
    for name in ["sweep_schedules.json", "make_it_fit/sweep.json"]:
        expected = cli_jsonl(cli, examples / name, tmp_path)
        # From another directory: the base ("1f1b.json") is found next to the sweep file.
        monkeypatch.chdir(tmp_path)
        assert _perflow._sweep_jsonl(str(examples / name), "", True, [], 0) == expected
        rows = sweep(examples / name)
        assert rows == [json.loads(line) for line in expected.splitlines()]
    assert len(rows) == 6 and rows[5]["/costs/recompute"] == "full"


def test_sweep_dict_base_is_relative_to_the_current_directory(source_dir, cli, tmp_path,
                                                              monkeypatch):
    examples = source_dir / "examples"
    path = examples / "sweep_schedules.json"
    document = json.loads(path.read_text())
    # As the CLI runs a sweep named from its directory: the base is "1f1b.json" in messages.
    expected = cli_jsonl(cli, "sweep_schedules.json", tmp_path, cwd=examples)
    monkeypatch.chdir(examples)
    rows = sweep(document)
    assert rows == [json.loads(line) for line in expected.splitlines()]
    assert rows[16]["error"].startswith("1f1b.json:/pipeline/microbatches: interleaved-1f1b")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sweep.json").write_text(json.dumps(document))
    message = cli_error(run_cli(cli, ["sweep", "sweep.json"], cwd=tmp_path),
                        [("sweep.json:", "<dict>:")])
    assert message == "<dict>:/base: cannot read the base config '1f1b.json': cannot open the " \
                      "file for reading"
    with pytest.raises(perflow.ConfigError) as e:
        sweep(document)
    assert str(e.value) == message
    assert (e.value.file, e.value.pointer) == ("<dict>", "/base")


def test_sweep_axes_keep_the_dict_order(source_dir, cli, tmp_path):
    document = {
        "base": {"pipeline": {"schedule": "1f1b", "stages": 4, "microbatches": 8},
                 "costs": {"forward": "1ms", "backward": "2ms", "weight": "1ms"}},
        # Not sorted: the first axis written is the outermost, as in a file.
        "axes": {"/pipeline/stages": [4, 2], "/pipeline/microbatches": [8, 4, 3],
                 "/costs/forward": ["1ms", "2ms"],
                 "/pipeline/schedule": ["1f1b", "interleaved-1f1b"], "/pipeline/chunks": [1, 2]},
        "zip": [["/pipeline/schedule", "/pipeline/chunks"]],
    }
    path = tmp_path / "order.json"
    path.write_text(json.dumps(document, indent=1))
    # The rows of the file, whose errors name the file where the dict's name "<dict>".
    text = cli_jsonl(cli, path, tmp_path).replace(f'"{path}:/base/', '"<dict>:/base/')
    expected = [json.loads(line) for line in text.splitlines()]
    rows = sweep(document)
    assert rows == expected
    assert [list(row) for row in rows] == [list(row) for row in expected]
    assert list(rows[0])[1:6] == list(document["axes"])
    assert (rows[1]["/pipeline/stages"], rows[1]["/pipeline/schedule"]) == (4, "interleaved-1f1b")
    # An invalid combination is a row with the CLI's message, not an exception.
    assert any(row["error"] for row in rows)
    assert all(row["makespan_ns"] is None for row in rows if row["error"])


def test_sweep_errors_are_the_cli_messages(source_dir, cli, tmp_path):
    case = source_dir / "tests" / "golden" / "error_sweep_axis"
    expected = cli_error(run_cli(cli, ["sweep", "sweep.json"], cwd=case))
    with pytest.raises(perflow.ConfigError) as e:
        sweep(case / "sweep.json")
    assert str(e.value) == expected.replace("sweep.json", str(case / "sweep.json"))
    with pytest.raises(perflow.ConfigError) as e:
        sweep(json.loads((case / "sweep.json").read_text()))
    assert str(e.value) == expected.replace("sweep.json", "<dict>")
    assert str(e.value) == "<dict>:/axes/~1pipeline~1stages/step: expected a step that goes " \
                           "from 8 to 2, got 2"
    with pytest.raises(perflow.ConfigError, match=r"^<string>: invalid JSON at line 1, column 2: "):
        sweep("{,}")
    with pytest.raises(perflow.ConfigError, match=r"missing\.json: cannot open the file"):
        sweep(tmp_path / "missing.json")
    with pytest.raises(ValueError, match=r"^jobs: expected a whole number from 1 to 4096, "
                                         r"found 0$"):
        sweep(case / "sweep.json", jobs=0)
    with pytest.raises(TypeError, match="^sweep_config: expected a path, a dict or JSON text"):
        sweep(["sweep.json"])


# ---------------------------------------------------------------------------------------------
# search

@pytest.fixture
def small_search(source_dir):
    """Gpt-1.7b on 8 H100s: 32 plans (golden search_json)."""
    return source_dir / "tests" / "golden" / "search_json" / "search.json"


def cli_plans(cli, search_file, tmp_path, jobs="2"):
    out = tmp_path / "plans.json"
    result = run_cli(cli, ["search", search_file, "-o", out, "--jobs", jobs])
    assert result.returncode == 0, result.stderr
    return out.read_text()


def test_search_is_the_cli_plans_file(small_search, cli, tmp_path):
    expected = cli_plans(cli, small_search, tmp_path)
    assert _perflow._search_json(str(small_search), "", True, [], 2) == expected
    plans = search(small_search, jobs=2)
    assert plans == json.loads(expected)
    assert search(json.loads(small_search.read_text()), jobs=1) == plans
    assert (plans["considered"], len(plans["best"])) == (32, 2)
    # Every plan's config runs to its figures.
    best = plans["best"][0]
    assert perflow.simulate(best["config"])["makespan_ns"] == best["makespan_ns"]


def test_search_keeps_the_order_of_the_gpu_types(cli, tmp_path):
    # One GPU under two names: the placements tie, and ties rank in enumeration order, which
    # places the type written first first.
    document = {
        "base": {"model": {"preset": "gpt-1.7b"},
                 "training": {"global_batch_size": 16, "precision": "bf16"}},
        "cluster": {"gpus": {"Y": {"preset": "h100-sxm", "count": 2},
                             "X": {"preset": "h100-sxm", "count": 2}},
                    "devices_per_node": 4},
        "space": {"schedules": ["1f1b"], "tensor_parallel": [1], "micro_batch_size": [2],
                  "recompute": ["none"], "pipeline": [4], "layers": ["even"]},
        "top": 3,
    }
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(document, indent=1))
    expected = json.loads(cli_plans(cli, path, tmp_path, jobs="1"))
    plans = search(document)
    assert plans == expected
    assert [p["placement"] for p in plans["best"]] == ["Y:2,X:2", "X:2,Y:2"]
    assert len({p["makespan_ns"] for p in plans["best"]}) == 1
    reordered = dict(document, cluster=dict(document["cluster"], gpus={
        "X": document["cluster"]["gpus"]["X"], "Y": document["cluster"]["gpus"]["Y"]}))
    assert [p["placement"] for p in search(reordered)["best"]] == ["X:2,Y:2", "Y:2,X:2"]


def test_search_errors_are_the_cli_messages(source_dir, cli):
    case = source_dir / "tests" / "golden" / "error_search_count"
    expected = cli_error(run_cli(cli, ["search", "search.json"], cwd=case))
    with pytest.raises(perflow.ConfigError) as e:
        search(case / "search.json")
    assert str(e.value) == expected.replace("search.json", str(case / "search.json"))
    with pytest.raises(perflow.ConfigError) as e:
        search(json.loads((case / "search.json").read_text()))
    assert str(e.value) == "<dict>:/cluster/gpus/H100/count: expected an integer >= 1, got 0"
    assert (e.value.file, e.value.pointer) == ("<dict>", "/cluster/gpus/H100/count")
    with pytest.raises(ValueError, match="^jobs: expected a whole number"):
        search(case / "search.json", jobs=True)
    with pytest.raises(TypeError, match="^search_config: expected a path"):
        search(42, jobs=1)
