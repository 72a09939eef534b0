"""t2t-import on runs made by tensor2tensor 1.15.7 itself
(tests/fixtures/t2t, scripts/t2t_reference): the imported runs decode as
tensor2tensor's t2t-decoder did (greedy and beam 4, through t2t-decoder and
the exported SavedModel), fine-tune on tensor2tensor's shards, resume, and
export to CTranslate2."""

import glob
import json
import os
import shutil

import pytest

from commands import t2t_command as command

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "t2t")
T2T_DATA = os.path.join(FIXTURES, "data")
SOURCE = os.path.join(FIXTURES, "val20.en")
RUNS = ("tiny", "base_v1", "relative", "separate")
# Each run's tensor2tensor data dir: "separate" has a vocabulary a side.
DATA = {run: T2T_DATA for run in RUNS} | {
    "separate": os.path.join(FIXTURES, "data_separate")}


def _lines(path):
  with open(path, encoding="utf-8") as f:
    return f.read().split("\n")[:-1]


def agreeing(ours, theirs):
  """Lines equal to tensor2tensor's (separate's greedy line 6 runs to the
  length limit, where tensor2tensor stops unfinished)."""
  return sum(a == b for a, b in zip(ours, theirs, strict=True))


def _import(tmp_path, run, *extra):
  out, data = tmp_path / run, tmp_path / f"{run}_data"
  done = command("t2t_import", f"--t2t_output_dir={FIXTURES}/{run}",
                 f"--t2t_data_dir={DATA[run]}", f"--output_dir={out}",
                 f"--data_dir={data}", *extra)
  assert done.returncode == 0, done.stderr
  return str(out), str(data), done.stdout


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
  root = tmp_path_factory.mktemp("imported")
  return {run: _import(root, run)[:2] for run in RUNS}


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("search,beam", [("greedy", 1), ("beam4", 4)])
def test_decodes_as_tensor2tensor(imported, run, search, beam, tmp_path):
  out_dir, data_dir = imported[run]
  out = tmp_path / "out"
  done = command("t2t_decoder", "--problem=t2t_import",
                 f"--data_dir={data_dir}", f"--output_dir={out_dir}",
                 f"--decode_from_file={SOURCE}", f"--decode_to_file={out}",
                 f"--decode_hparams=beam_size={beam},alpha=0.6")
  assert done.returncode == 0, done.stderr
  theirs = _lines(os.path.join(FIXTURES, run, f"decode.{search}"))
  assert agreeing(_lines(out), theirs) == 20


def test_saved_model_decodes_as_tensor2tensor(imported, tmp_path):
  import tensorflow as tf
  import tensorflow_text  # noqa: F401 (registers the graph's ops)
  out_dir, data_dir = imported["tiny"]
  done = command("t2t_exporter", "--problem=t2t_import",
                 f"--data_dir={data_dir}", f"--output_dir={out_dir}",
                 f"--export_dir={tmp_path / 'export'}")
  assert done.returncode == 0, done.stderr
  served = tf.saved_model.load(glob.glob(str(tmp_path / "export" / "*"))[0])
  outputs = served.signatures["serving_default"](
      inputs=tf.constant(_lines(SOURCE)))["outputs"].numpy()
  theirs = _lines(os.path.join(FIXTURES, "tiny", "decode.beam4"))
  assert agreeing([o.decode("utf-8") for o in outputs], theirs) >= 19


def test_finetune_on_its_shards_resume_and_ctranslate2(tmp_path):
  out_dir, data_dir, said = _import(tmp_path, "tiny")
  step = json.load(open(os.path.join(out_dir, "model.json"),
                        encoding="utf-8"))["flags"]["imported_step"]
  # The fixture's checkpoint was written without Adam's slots.
  assert f"ckpt-{step}" in said and "holds no Adam moments" in said
  common = ["--problem=t2t_import", f"--data_dir={data_dir}",
            f"--output_dir={out_dir}", "--noeval_bleu", "--eval_steps=2",
            "--save_checkpoints_steps=10"]
  done = command("t2t_trainer", *common, f"--train_steps={step + 10}")
  assert done.returncode == 0, done.stderr
  assert "imported from tensor2tensor: the training data starts a new " \
      "order" in done.stdout
  done = command("t2t_trainer", *common, f"--train_steps={step + 20}")
  assert done.returncode == 0, done.stderr
  assert f"resumed from {out_dir}/ckpt-{step + 10}" in done.stdout
  assert "continuing the training data from its position" in done.stdout
  ct2 = tmp_path / "ct2"
  done = command("t2t_exporter", "--problem=t2t_import",
                 f"--data_dir={data_dir}", f"--output_dir={out_dir}",
                 f"--export_dir={ct2}", "--format=ctranslate2")
  assert done.returncode == 0, done.stderr
  assert os.path.isfile(ct2 / "source.subwords")
  out = tmp_path / "ct2.de"
  done = command("t2t_decoder", f"--ct2_model_dir={ct2}",
                 f"--decode_from_file={SOURCE}", f"--decode_to_file={out}")
  assert done.returncode == 0, done.stderr
  lines = _lines(out)
  assert len(lines) == 20 and all(lines)
  assert sum(line.startswith(("Ein", "Eine", "Zwei", "Drei", "Der", "Die"))
             for line in lines) >= 15


def test_what_it_cannot_map_is_refused_in_one_line(tmp_path):
  run = tmp_path / "t2t_run"
  shutil.copytree(os.path.join(FIXTURES, "tiny"), run)
  hparams = json.load(open(run / "hparams.json", encoding="utf-8"))
  hparams["self_attention_type"] = "dot_product_relative_v2"
  json.dump(hparams, open(run / "hparams.json", "w", encoding="utf-8"))
  done = command("t2t_import", f"--t2t_output_dir={run}",
                 f"--t2t_data_dir={T2T_DATA}",
                 f"--output_dir={tmp_path / 'out'}",
                 f"--data_dir={tmp_path / 'data'}")
  assert done.returncode == 2
  assert done.stderr.strip().splitlines() == [
      "error: the tensor2tensor run's self_attention_type="
      "'dot_product_relative_v2' cannot be imported: t2t-import reproduces "
      "dot-product self-attention, plain or relative only"]
  assert not os.path.exists(tmp_path / "out")
  done = command("t2t_import", f"--t2t_output_dir={FIXTURES}/tiny",
                 f"--t2t_data_dir={tmp_path}",
                 f"--output_dir={tmp_path / 'out'}",
                 f"--data_dir={tmp_path / 'data'}")
  assert done.returncode == 2 and "vocab.*.subwords" in done.stderr
