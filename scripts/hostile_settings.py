"""More cases of scripts/hostile_user.py (the format of hostile_cases.py):
settings out of range, a closed terminal, empty train files, a SavedModel
whose variables are gone."""

import os
import shutil
import signal

from hostile_steps import (copy_run, decoder, in_dir, signal_at_step_100,
                           source_file, trainer, write_file)
import hostile_cases


def _decode_setting(setting, error):
  return dict(kind="bad setting", name=f"decoder: --decode_hparams={setting}",
              command=lambda h: decoder(h, None, None,
                                        f"--decode_hparams={setting}",
                                        f"--decode_from_file={source_file(h)}"),
              error=error)


def _empty_train(h):
  raw = in_dir(h, "raw")
  os.makedirs(raw)
  for name, text in (("train.en", "\n\n"), ("train.de", "\n\n"),
                     ("dev.en", "a b\n"), ("dev.de", "c d\n")):
    write_file(os.path.join(raw, name), text)
  return ["t2t-datagen", "--problem=translate_ende",
          f"--data_dir={in_dir(h, 'newdata')}", f"--raw_data_dir={raw}",
          "--raw_prefixes=train=train,dev=dev", "--vocab_size=300"]


def _no_variables(h):
  versions = sorted(os.listdir(h["export"]))
  saved = in_dir(h, "saved")
  shutil.copytree(os.path.join(h["export"], versions[-1]), saved)
  os.remove(os.path.join(saved, "variables", "variables.index"))
  h["saved_copy"] = saved
  return ["t2t-decoder", f"--saved_model_dir={saved}",
          f"--decode_from_file={source_file(h)}"]


CASES = [
    _decode_setting("beam_size=0", "beam_size=0 is out of range"),
    _decode_setting("beam_size=-2", "beam_size=-2 is out of range"),
    _decode_setting("alpha=-1", "alpha=-1 is out of range"),
    _decode_setting("extra_length=-5", "extra_length=-5 is out of range"),
    _decode_setting("beam_size=100000", "the target vocabulary of"),
    _decode_setting("weights=int4", "weights must be one of float32, "
                    "bfloat16, int8, got 'int4'"),
    hostile_cases.refused_run("batch_size=4, below every example",
                              "the shortest training example",
                              "--hparams=batch_size=4"),
    dict(kind="bad file", name="datagen: train files without text",
         setup=_empty_train, error="(no line with text)",
         check=lambda h, done: "" if not os.path.exists(
             in_dir(h, "newdata")) else "newdata was left"),
    dict(kind="bad file", name="decoder: a SavedModel without its variables",
         setup=_no_variables, error="its variables are missing"),
    dict(kind="signal", name="trainer: SIGHUP mid-training (a closed terminal)",
         setup=lambda h: trainer(h, copy_run(h), "--train_steps=100000",
                                 "--save_checkpoints_steps=100000"),
         exit=129, own_changes=True, error="stopped by SIGHUP",
         during=signal_at_step_100(signal.SIGHUP), check=hostile_cases.trained_past_40),
]
