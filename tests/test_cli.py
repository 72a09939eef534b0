"""t2t-trainer as a user runs it: flags, errors, two CPU replicas, resume."""

import json
import os
import re
import shutil

import pytest

from commands import t2t_command as command


def trainer(*args):
  return command("t2t_trainer", *args)


def test_train_then_resume(tmp_path):
  out = str(tmp_path / "run")
  args = ["--problem=copy_sequence", "--hparams_set=transformer_tiny",
          "--hparams=hidden_size=32,filter_size=64,num_hidden_layers=1,"
          "batch_size=320,max_length=16", f"--output_dir={out}"]
  # The first run trains one replica; the resumed one splits the CPU into
  # two logical devices and goes on with one replica on each.
  first = trainer(*args, "--train_steps=4", "--local_eval_frequency=2")
  assert first.returncode == 0, first.stderr[-3000:]
  assert "1 replica(s)" in first.stdout
  assert "step 2: dev loss" in first.stdout
  assert "step 4: dev loss" in first.stdout
  saved = json.load(open(os.path.join(out, "hparams.json"), encoding="utf-8"))
  assert saved["hidden_size"] == 32 and saved["layer_prepostprocess_dropout"] == 0.1
  spec = json.load(open(os.path.join(out, "model.json"), encoding="utf-8"))
  assert spec["model"] == "transformer" and spec["target_vocab_size"] == 12
  assert spec["flags"]["train_steps"] == 4
  second = trainer(*args, "--train_steps=5", "--cpu_devices=2")
  assert second.returncode == 0, second.stderr
  assert "2 replica(s)" in second.stdout
  assert "resumed from" in second.stdout and "at step 4" in second.stdout
  assert "step 5: dev loss" in second.stdout
  # The paper's Adam (section 5.3) as the command builds it.
  assert ("; FusedAdam(beta_1=0.9, beta_2=0.98, epsilon=1e-09), learning "
          "rate paper (warm-up 4000)") in first.stdout, first.stdout
  # Other hparams in the same directory would train another model.
  other = trainer(*args[:2], "--hparams=hidden_size=48,filter_size=64,"
                  "num_hidden_layers=1,batch_size=320,max_length=16",
                  args[3], "--train_steps=6")
  assert other.returncode == 2, other.stderr[-2000:]
  assert other.stderr.strip().splitlines() == [
      f"error: {out}/hparams.json was written with other hparams "
      "(hidden_size differ); use a new --output_dir or the same --hparams"]


def test_the_decoders_defaults_are_the_papers(trained_run, tmp_path):
  """Section 6.1's beam search (beam 4, alpha 0.6, output length input +
  50) is what t2t-decoder runs when nothing is said."""
  data, out = trained_run
  source = tmp_path / "in.txt"
  source.write_text("the dog sees a cat\n", encoding="utf-8")
  done = command("t2t_decoder", "--problem=translate_synthetic",
                 f"--data_dir={data}", f"--output_dir={out}",
                 f"--decode_from_file={source}")
  assert done.returncode == 0, done.stderr[-2000:]
  said = [l for l in done.stderr.splitlines() if l.startswith("decoding with")]
  assert len(said) == 1 and said[0].endswith(
      "beam 4, alpha 0.6, extra length 50"), done.stderr


@pytest.mark.parametrize("args, message", [
    (["--problem=copy_sequense", "--hparams_set=transformer_tiny"],
     "unknown problem name 'copy_sequense'. Did you mean: copy_sequence?"),
    (["--problem=copy_sequence", "--hparams_set=transformer_tin"],
     "Did you mean: transformer_tiny"),
    (["--problem=copy_sequence", "--hparams_set=transformer_tiny",
      "--hparams=hidden_size=1,pos"], "malformed part 'pos'"),
    (["--problem=copy_sequence", "--hparams_set=transformer_tiny",
      "--hparams=hiden_size=1"], "unknown hparam 'hiden_size'"),
])
def test_bad_input_is_one_clear_line(tmp_path, args, message):
  result = trainer(*args, f"--output_dir={tmp_path}")
  assert result.returncode == 2
  assert message in result.stderr
  assert "Traceback" not in result.stderr


def test_registry_help():
  result = trainer("--registry_help")
  assert result.returncode == 0
  assert "transformer_table3_e_pos_emb" in result.stdout
  assert "copy_sequence" in result.stdout


def test_datagen_then_train_on_the_default_problem(tmp_path):
  """The README's quickstart, shortened."""
  data = str(tmp_path / "data")
  gen = command("t2t_datagen", "--problem=translate_synthetic",
                f"--data_dir={data}")
  assert gen.returncode == 0, gen.stderr
  assert "train: 40,000 pairs in 10 shard(s); no lines skipped" in gen.stdout
  run = trainer("--problem=translate_synthetic", f"--data_dir={data}",
                "--hparams_set=transformer_tiny",
                "--hparams=hidden_size=32,filter_size=64,"
                "num_hidden_layers=1,batch_size=512",
                "--train_steps=4", "--eval_steps=1", "--eval_bleu_lines=20",
                f"--output_dir={tmp_path / 'train'}")
  assert run.returncode == 0, run.stderr
  assert "step 4: dev loss" in run.stdout and "BLEU" in run.stdout


@pytest.mark.parametrize("name,args", [
    ("t2t_trainer", ["--registry_help"]),
    ("t2t_decoder", ["--registry_help"]),
    ("t2t_analyze", ["--hparams_set=transformer_tiny", "--vocab_size=100"]),
])
def test_quiet_start(name, args):
  """No TensorFlow C++ start-up lines unless --tf_logs asks for them."""
  env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
  start_up = re.compile(r"oneDNN|cuInit|cuda|absl::InitializeLog")

  def run(*extra):
    return command(name, *args, *extra, env=env)
  quiet = run()
  assert quiet.returncode == 0, quiet.stderr
  assert not start_up.search(quiet.stdout + quiet.stderr), quiet.stderr
  if name == "t2t_trainer":   # one module quiets every command
    loud = run("--tf_logs")
    assert loud.returncode == 0 and start_up.search(loud.stderr)


def test_tensorflow_warnings_after_the_import_reach_the_user():
  """The start-up lines are held back during the import only (and kept:
  logs.native_errors quotes them); a C++ warning afterwards is shown."""
  import subprocess
  import sys
  env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
  code = ("import sys; sys.argv = ['t2t-x']\n"
          "import t2t_keras.bin.quiet_tensorflow\n"
          "from t2t_keras.io import logs\n"
          "import tensorflow as tf\n"
          "print('kept', len(logs.KEPT_LINES), flush=True)\n"
          "it = iter(tf.data.Dataset.range(10).cache()); next(it); del it\n"
          "import gc; gc.collect()\n")
  done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                        text=True, env=env, timeout=300, check=False)
  assert done.returncode == 0, done.stderr[-2000:]
  assert not re.search(r"oneDNN|absl::InitializeLog", done.stderr)
  assert re.search(r"^W\d{4} .*cache_dataset_ops.*did not fully read",
                   done.stderr, re.M), done.stderr[-2000:]


@pytest.mark.parametrize("name,flag_names", [
    ("t2t_bleu", ("translation", "reference")),
    ("t2t_evalb", ("gold_file", "test_file")),
])
def test_scoring_commands_do_not_import_tensorflow(name, flag_names, tmp_path):
  """t2t-bleu and t2t-evalb score a file in a fraction of a second."""
  import subprocess
  import sys
  text = tmp_path / "lines"
  text.write_text("(S (NP (DT the) (NN dog)) (VP (VBZ barks)))\n",
                  encoding="utf-8")
  argv = [name] + [f"--{f}={text}" for f in flag_names]
  code = (f"import sys; sys.argv = {argv!r}\n"
          f"import t2t_keras.bin.{name} as command\n"
          "try:\n  command.run()\nexcept SystemExit as e:\n"
          "  assert not e.code, e.code\n"
          "print('tensorflow' in sys.modules, 'keras' in sys.modules)")
  done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                        text=True, timeout=120, check=False)
  assert done.returncode == 0, done.stderr[-2000:]
  assert "100.00" in done.stdout, done.stdout
  assert done.stdout.strip().splitlines()[-1] == "False False", done.stdout


def _without_tensorflow(name, *args):
  """Runs command ``name`` with ``args`` in a fresh interpreter in which an
  import of TensorFlow fails; returns the CompletedProcess."""
  import subprocess
  import sys
  code = (f"import sys; sys.argv = {[name, *args]!r}\n"
          "sys.modules['tensorflow'] = None\n"
          f"import t2t_keras.bin.{name} as command\n"
          "command.run()")
  return subprocess.run([sys.executable, "-c", code], capture_output=True,
                        text=True, timeout=120, check=False)


@pytest.mark.parametrize("name,args,message", [
    ("t2t_trainer", ["--problem=translate_endee",
                     "--hparams_set=transformer_tiny", "--output_dir=x"],
     "unknown problem name 'translate_endee'. Did you mean: translate_ende"),
    ("t2t_trainer", ["--problem=copy_sequence", "--model=transformr",
                     "--hparams_set=transformer_tiny", "--output_dir=x"],
     "unknown model name 'transformr'. Did you mean: transformer"),
    ("t2t_trainer", ["--problem=copy_sequence", "--output_dir=x",
                     "--hparams_set=transformer_tiny", "--hparams=hiden=1"],
     "unknown hparam 'hiden'"),
    ("t2t_datagen", ["--problem=parsing_wjs", "--data_dir=x"],
     "Did you mean: parsing_wsj"),
    ("t2t_analyze", ["--hparams_set=transformer_bse"],
     "Did you mean: transformer_base"),
    ("t2t_decoder", ["--problem=parsing_wsj", "--model=transformr",
                     "--output_dir=x", "--data_dir=x"],
     "Did you mean: transformer"),
    ("t2t_exporter", ["--problem=parsing_wsj", "--output_dir=x",
                      "--data_dir=x", "--hparams_set=transformer_bse"],
     "Did you mean: transformer_base"),
    # Retired names: one line that names the successor.
    ("t2t_trainer", ["--problem=translate_ende", "--output_dir=x",
                     "--hparams_set=transformer_multi30k_v4"],
     "error: hparams name 'transformer_multi30k_v4' is retired: use "
     "transformer_multi30k (the same values)"),
    ("t2t_datagen", ["--problem=parsing_wsj_inorder", "--data_dir=x"],
     "error: problem name 'parsing_wsj_inorder' is retired: use parsing_wsj "
     "(the brackets in order are its default)"),
    ("t2t_decoder", ["--problem=parsing_wsj_first", "--output_dir=x",
                     "--data_dir=x"],
     "use parsing_wsj with t2t-datagen --tree_order=top-down "
     "--tree_leaves=first"),
])
def test_unknown_names_are_answered_before_tensorflow(name, args, message):
  """A typo in a registry name or an override is one line, before
  TensorFlow is imported (an import of it fails in this process)."""
  done = _without_tensorflow(name, *args)
  assert done.returncode == 2, done.stderr[-2000:]
  assert message in done.stderr, done.stderr[-2000:]
  assert "Traceback" not in done.stderr, done.stderr[-2000:]
  assert len(done.stderr.strip().splitlines()) == 1, done.stderr[-2000:]


@pytest.mark.parametrize("name", ["t2t_decoder", "t2t_exporter"])
def test_good_names_pass_the_checks_of_a_command_without_overrides(name):
  """Commands that take --hparams_set but no --hparams: good names pass the
  checks (nothing reads an --hparams flag they do not define), and the
  command goes on to import TensorFlow (made to fail here)."""
  done = _without_tensorflow(name, "--problem=parsing_wsj",
                             "--model=transformer",
                             "--hparams_set=transformer_parsing_small")
  assert done.returncode != 0
  last = done.stderr.strip().splitlines()[-1]
  assert "import of tensorflow halted" in last, done.stderr[-2000:]


def test_flags_a_command_does_not_use_are_refused_or_checked(trained_run,
                                                             tmp_path):
  data, out = trained_run
  common = ["--problem=translate_synthetic", f"--data_dir={data}",
            f"--output_dir={out}"]
  done = command("t2t_attention", *common, "--sentence=the cat",
                     f"--out_dir={tmp_path}", "--model=transformer")
  assert done.returncode == 2, done.stderr[-2000:]
  assert "t2t-attention does not read --model" in done.stderr
  # A run that t2t-trainer made records its flags in model.json.
  run = tmp_path / "run"
  shutil.copytree(out, run)
  spec = json.loads((run / "model.json").read_text())
  spec.setdefault("flags", {})["hparams_set"] = "transformer_tiny"
  (run / "model.json").write_text(json.dumps(spec))
  common[-1] = f"--output_dir={run}"
  done = command("t2t_exporter", *common, "--hparams_set=transformer_base",
                     f"--export_dir={tmp_path / 'export'}")
  assert done.returncode == 2, done.stderr[-2000:]
  assert done.stderr.strip().splitlines()[-1].endswith(
      "was trained with --hparams_set=transformer_tiny")


def test_native_lines_are_kept_filtered_and_quoted(capfd, monkeypatch):
  """What C++ prints at fd 2 in a filtered block comes back less the known
  noise; an error line held back at start-up is quoted without its
  prefix."""
  from t2t_keras.io import logs
  monkeypatch.delenv("T2T_NATIVE_LOGS", raising=False)
  monkeypatch.setattr(logs, "KEPT_LINES", [])
  with logs.native_stderr_filtered():
    os.write(2, b"E0000 00:00:1.5 1 util.cc:131] oneDNN supports DT_INT64 "
             b"only on platforms with AVX-512.\nW0000 00:00:1.5 1 a.cc:9] "
             b"keep me\n")
  assert capfd.readouterr().err == "W0000 00:00:1.5 1 a.cc:9] keep me\n"
  with logs.native_stderr_kept():
    os.write(2, b"E0000 00:00:1.5 1 cuda_platform.cc:52] failed call to "
             b"cuInit: UNKNOWN ERROR (303)\nI0000 00:00:1.5 1 b.cc:1] note\n")
  assert capfd.readouterr().err == ""
  assert logs.native_errors() == ["failed call to cuInit: UNKNOWN ERROR "
                                  "(303)"]
