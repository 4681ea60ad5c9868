"""perflow.import_megatron and perflow.import_torchtitan: the configs `perflow import` writes."""
import json
import subprocess

import pytest

import perflow

GPT3_ARGS = "tests/golden/import_megatron_gpt3_175b/gpt3_175b.args"
LLAMA3_70B_JOB = "tests/golden/import_torchtitan_llama3_70b/llama3_70b.toml"
SC21_LAYOUT = ["--pipeline-model-parallel-size", "8", "--num-layers-per-virtual-pipeline-stage",
               "6", "--recompute-granularity", "full", "--recompute-method", "uniform",
               "--attention-backend", "unfused", "--overlap-grad-reduce"]


def test_megatron_is_what_the_cli_writes(source_dir, cli):
    args_file = source_dir / GPT3_ARGS
    imported = perflow.import_megatron(SC21_LAYOUT, gpu="a100-80gb", nodes=128,
                                       args_file=args_file)
    written = subprocess.run(
        [cli, "import", "megatron", "--gpu", "a100-80gb", "--nodes", "128", "--args-file",
         str(args_file), "--"] + SC21_LAYOUT, capture_output=True, text=True, check=True)
    assert json.loads(written.stdout) == imported.config
    assert list(imported.config) == list(json.loads(written.stdout))  # the same key order
    assert imported.unknown == []
    assert len(imported.warnings) == 1
    assert imported.warnings[0].startswith("--step-batch-size-schedule '0:16 2.4B:320")


def test_megatron_config_simulates_as_the_example(source_dir):
    # Megatron-LM's even split (6 layers per chunk) is PerFlow's default: the imported
    # config is examples/gpt3_175b_a100.json.
    imported = perflow.import_megatron(SC21_LAYOUT, gpu="a100-80gb", nodes=128,
                                       args_file=source_dir / GPT3_ARGS).config
    assert "layers" not in imported["pipeline"]
    example = json.loads((source_dir / "examples/gpt3_175b_a100.json").read_text())
    for config in (imported, example):
        config.pop("description")
        config.pop("comment", None)
    assert imported == example
    assert (perflow.simulate(imported)["iteration_time_ns"]
            == perflow.simulate(example)["iteration_time_ns"])


def test_megatron_args_as_a_string_and_unknown_flags():
    imported = perflow.import_megatron(
        "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 1024 "
        "--micro-batch-size 1 --vocab-size 1000 --bf16 --frobnicate 3  # a comment",
        gpu="h100-sxm", nodes=1)
    assert imported.unknown == ["--frobnicate 3"]
    assert imported.config["model"]["vocab"] == 1024
    assert imported.config["parallelism"] == {"tensor_parallel": 1, "data_parallel": 8,
                                              "overlap_grad_reduce": False}


def test_missing_gpu_and_nodes_name_the_argument():
    args = ["--num-layers", "4", "--hidden-size", "256", "--num-attention-heads", "8",
            "--seq-length", "1024", "--micro-batch-size", "1", "--vocab-size", "1000"]
    with pytest.raises(perflow.OptionError) as error:
        perflow.import_megatron(args, nodes=1)
    assert error.value.field == "gpu"
    assert "give gpu (one of a100-40gb" in str(error.value)
    with pytest.raises(perflow.OptionError) as error:
        perflow.import_megatron(args, gpu="h100-sxm")
    assert error.value.field == "nodes"
    with pytest.raises(perflow.OptionError) as error:
        perflow.import_megatron(args, gpu="h100-sxm", nodes=0)
    assert error.value.field == "nodes"
    with pytest.raises(perflow.Error, match="--tensor-model-parallel-size: expected an integer"):
        perflow.import_megatron(args + ["--tensor-model-parallel-size", "eight"],
                                gpu="h100-sxm", nodes=1)


def test_torchtitan_job(source_dir, cli):
    job = source_dir / LLAMA3_70B_JOB
    imported = perflow.import_torchtitan(job, gpu="a100-80gb", nodes=8)
    written = subprocess.run([cli, "import", "torchtitan", str(job), "--gpu", "a100-80gb",
                              "--nodes", "8"], capture_output=True, text=True, check=True)
    assert json.loads(written.stdout) == imported.config
    assert imported.config["model"] == {"preset": "llama3-70b"}
    assert imported.config["parallelism"] == {"tensor_parallel": 8, "data_parallel": 8,
                                              "fsdp": "zero3"}
    assert imported.unknown == []
    with pytest.raises(perflow.FormatError):
        perflow.import_torchtitan(source_dir / "tests/golden/error_import_torchtitan_value/job.toml",
                                  gpu="h100-sxm", nodes=1)


HOSTILE = [None, True, 1.5, -1, 0, 2**64, float("nan"), "", "\0", "\ud800", b"x", [1], ["\ud800"],
           [b"--x"], {"a": 1}, object(), "--num-layers", ["--num-layers"], ["--moe-layer-freq",
           "[1]*4294967295"]]


def test_hostile_arguments_raise_named_errors_only(source_dir):
    accepted = (perflow.Error, TypeError, ValueError)
    job = source_dir / LLAMA3_70B_JOB
    calls = []
    for value in HOSTILE:
        calls += [
            lambda v=value: perflow.import_megatron(v, gpu="h100-sxm", nodes=1),
            lambda v=value: perflow.import_megatron([], gpu=v, nodes=1),
            lambda v=value: perflow.import_megatron([], gpu="h100-sxm", nodes=v),
            lambda v=value: perflow.import_megatron([], gpu="h100-sxm", nodes=1, vocab=v),
            lambda v=value: perflow.import_megatron([], gpu="h100-sxm", nodes=1, args_file=v),
            lambda v=value: perflow.import_torchtitan(v, gpu="h100-sxm", nodes=1),
            lambda v=value: perflow.import_torchtitan(job, gpu=v, nodes=1),
            lambda v=value: perflow.import_torchtitan(job, gpu="a100-80gb", nodes=8,
                                                      gpus_per_node=v),
        ]
    for call in calls:
        try:
            call()
        except accepted:
            pass
