"""What GPUs run, on a CPU: the plain path (``T2T_KERAS_KERNELS=0``, the
fast paths off, as on GPUs) in mixed bfloat16 on two logical CPU devices:
training, resuming from the saved data position, decoding and exporting,
with the fast path's strings from the same checkpoint (within float
rounding)."""

import os
import re

from commands import t2t_command

HPARAMS = ("hidden_size=64,filter_size=128,num_hidden_layers=1,"
           "batch_size=1024,learning_rate_warmup_steps=40,"
           "activation_dtype=bfloat16")
LINES = 40


def _env(kernels):
  return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", T2T_KERAS_KERNELS=kernels)


def _run(name, *args, kernels="0"):
  done = t2t_command(name, *args, env=_env(kernels))
  assert done.returncode == 0, done.stderr[-3000:]
  return done


def test_plain_path_in_bfloat16_on_two_cpus(trained_run, tmp_path):
  data, _ = trained_run
  out = tmp_path / "run"
  train = ["--cpu_devices=2", "--problem=translate_synthetic",
           "--hparams_set=transformer_tiny", f"--hparams={HPARAMS}",
           f"--data_dir={data}", f"--output_dir={out}",
           "--save_checkpoints_secs=0", "--eval_bleu=false"]
  first = _run("t2t_trainer", *train, "--train_steps=60")
  assert "devices: 2 x CPU (2 replica(s)), bfloat16" in first.stdout
  second = _run("t2t_trainer", *train, "--train_steps=70")
  assert "continuing the training data from its position at step 60" in \
      second.stdout, second.stdout
  assert re.search(r"^step 70: dev loss", second.stdout, re.M)

  from t2t_keras import registry
  from t2t_keras.decoding.run import split_text
  problem = registry.problem("translate_synthetic").for_data(data)
  _, lines, _ = split_text(problem, data, "dev")
  sources = tmp_path / "sources.txt"
  sources.write_text("".join(l + "\n" for l in lines[:LINES]),
                     encoding="utf-8")
  decode = ["--problem=translate_synthetic", f"--data_dir={data}",
            f"--output_dir={out}", f"--decode_from_file={sources}"]
  strings = {}
  for kernels in ("0", "1"):
    target = tmp_path / f"dev.{kernels}.txt"
    _run("t2t_decoder", *decode, f"--decode_to_file={target}",
         kernels=kernels)
    strings[kernels] = target.read_text(encoding="utf-8").splitlines()
  plain, fast = strings["0"], strings["1"]
  assert len(plain) == len(fast) == LINES
  assert len(set(plain)) > LINES // 4, plain   # outputs differ by input
  same = sum(a == b for a, b in zip(plain, fast))
  assert same >= LINES - 2, list(zip(plain, fast))

  _run("t2t_exporter", "--problem=translate_synthetic", f"--data_dir={data}",
       f"--output_dir={out}", f"--export_dir={tmp_path / 'export'}")
  version = sorted(os.listdir(tmp_path / "export"))[-1]
  (tmp_path / "one.txt").write_text(lines[0] + "\n", encoding="utf-8")
  served = _run("t2t_decoder",
                f"--saved_model_dir={tmp_path / 'export' / version}",
                f"--decode_from_file={tmp_path / 'one.txt'}")
  assert served.stdout.splitlines() == [plain[0]], served.stdout
