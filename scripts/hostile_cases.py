"""The cases of scripts/hostile_user.py. Each is a dict:

  name, kind: what the table says.
  command(h) -> argv, or setup(h) -> argv (setup also makes files first);
    ``h`` holds the world's paths ("data", "run", "export", "saved") and
    the case's own folder "dir".
  error: text (or h -> text) the one error line must hold; absent: the
    command must succeed. exit: the expected status (default 2 or 0).
  during(h, argv) -> CompletedProcess: runs the command with signals or
    another command alongside, instead of plainly. own_changes: files the
    case made in its folder may change (a run it trains on).
  limit: a file-size limit in bytes (a full disk, as the kernel reports
    one: EFBIG). check(h, done) -> "" or what is wrong.
"""

import os
import signal
import subprocess

from hostile_steps import (
    absent,
    copy_data,
    copy_run,
    decoder,
    in_dir,
    old_output,
    same_lines,
    second_while_first,
    sigint_at_step_100,
    signalled,
    source_file,
    SOURCE_LINE,
    trainer,
    write_file)


def _over_old_output(h, run=None, data=None):
  """The decoder on 20 lines, writing over an output the user had."""
  return decoder(h, run, data, f"--decode_from_file={source_file(h)}",
                 f"--decode_to_file={old_output(h)}")


def _decode_big(h):
  return decoder(h, None, None, f"--decode_from_file={source_file(h, 3000)}",
                 f"--decode_to_file={in_dir(h, 'out.txt')}")


def _latin1(h):
  write_file(in_dir(h, "in.txt"), (SOURCE_LINE + " caf\xe9\n").encode("latin-1") * 5)
  return decoder(h, None, None, f"--decode_from_file={in_dir(h, 'in.txt')}",
                 f"--decode_to_file={in_dir(h, 'out.txt')}")


def _odd_lines(h):
  write_file(in_dir(h, "in.txt"), "\ufeff" + SOURCE_LINE + "\r\n\r\n" + SOURCE_LINE
         + "\n\n")
  return decoder(h, None, None, f"--decode_from_file={in_dir(h, 'in.txt')}",
                 f"--decode_to_file={in_dir(h, 'out.txt')}")


def _nul_and_long(h):
  write_file(in_dir(h, "in.txt"), SOURCE_LINE + "\x00 dog\n" +
         "the dog " * 5000 + "\n" + "\u2028 a cat\x0c sees\n")
  return decoder(h, None, None, f"--decode_from_file={in_dir(h, 'in.txt')}",
                 f"--decode_to_file={in_dir(h, 'out.txt')}")


def _damaged_vocab(h):
  data = copy_data(h)
  vocab = [n for n in os.listdir(data) if n.startswith("vocab.")][0]
  with open(os.path.join(data, vocab), "r+b") as f:
    f.truncate(100)
  h["vocab"] = os.path.join(data, vocab)
  return _over_old_output(h, None, data)


def _other_vocab(h):
  data = in_dir(h, "data")
  subprocess.run(["t2t-datagen", "--problem=translate_synthetic",
                  f"--data_dir={data}", "--vocab_size=500"],
                 capture_output=True, check=True)
  return _over_old_output(h, None, data)


def _edit_json(h, name, change):
  import json
  run = copy_run(h)
  path = os.path.join(run, name)
  with open(path, encoding="utf-8") as f:
    text = f.read()
  if change == "cut":
    write_file(path, text[:len(text) // 2])
  else:
    values = json.loads(text)
    values.update(change)
    write_file(path, json.dumps(values))
  return _over_old_output(h, run, None)


def _cut_checkpoint(h):
  run = copy_run(h)
  data = [n for n in os.listdir(run) if n.startswith("ckpt-40.data")][0]
  with open(os.path.join(run, data), "r+b") as f:
    f.truncate(1000)
  return _over_old_output(h, run, None)


def _best_damaged(h):
  run = copy_run(h)
  os.makedirs(os.path.join(run, "best"), exist_ok=True)
  write_file(os.path.join(run, "best", "best.json"), '{"metric": "loss", "hist')
  return trainer(h, run, "--train_steps=60", "--local_eval_frequency=20")


def _bad_usr_dir(h):
  os.makedirs(in_dir(h, "usr"))
  write_file(in_dir(h, "usr", "__init__.py"), "import os\nREGISTERED = undefined\n")
  return trainer(h, in_dir(h, "out"), f"--t2t_usr_dir={in_dir(h, 'usr')}",
                 "--train_steps=1")


def _raw(h, en, de):
  os.makedirs(in_dir(h, "raw"))
  if en is not None:
    write_file(in_dir(h, "raw", "train.en"), en)
  if de is not None:
    write_file(in_dir(h, "raw", "train.de"), de)
  for lang in ("en", "de"):
    write_file(in_dir(h, "raw", f"dev.{lang}"), "a b\n")
  return ["t2t-datagen", "--problem=translate_ende",
          f"--data_dir={in_dir(h, 'newdata')}", f"--raw_data_dir={in_dir(h, 'raw')}",
          "--raw_prefixes=train=train,dev=dev", "--vocab_size=300"]


def _sigint_trainer(h):
  return trainer(h, copy_run(h), "--train_steps=100000",
                 "--save_checkpoints_steps=100000")


def trained_past_40(h, done):
  saved = [n for n in os.listdir(in_dir(h, "run")) if n.endswith(".index")
           and int(n[5:-6]) > 40]
  if not saved:
    return "no checkpoint past step 40 was saved"
  return "" if "the same command resumes" in done.stderr else \
      "no line saying where it resumes"


def refused_run(name, error, *flags):
  """A trainer case refused in one line before its run folder is made."""
  return dict(kind="bad name", name=f"trainer: {name}", error=error,
              command=lambda h: trainer(h, in_dir(h, "out"), "--train_steps=1",
                                        *flags),
              check=absent("out"))


def _bleu(h, translation, reference, *more):
  return ["t2t-bleu", f"--translation={translation}",
          f"--reference={reference}", *more]


CASES = [
    # -- bad files and names ------------------------------------------------
    dict(kind="bad file", name="decoder: a mistyped --checkpoint_path",
         setup=lambda h: decoder(h, None, None,
                                 f"--checkpoint_path={h['run']}/ckpt-99",
                                 f"--decode_from_file={source_file(h)}",
                                 f"--decode_to_file={old_output(h)}"),
         error=lambda h: f"no checkpoint {h['run']}/ckpt-99"),
    dict(kind="bad file", name="decoder: output = input",
         setup=lambda h: decoder(h, None, None,
                                 f"--decode_from_file={source_file(h)}",
                                 f"--decode_to_file={in_dir(h, 'in.txt')}"),
         error=lambda h: in_dir(h, "in.txt")),
    dict(kind="bad file", name="decoder: an input that does not exist",
         command=lambda h: decoder(h, None, None,
                                   f"--decode_from_file={in_dir(h, 'no.txt')}",
                                   f"--decode_to_file={in_dir(h, 'out.txt')}"),
         error=lambda h: in_dir(h, "no.txt"), check=absent("out.txt")),
    dict(kind="bad file", name="decoder: an input that is a folder",
         command=lambda h: decoder(h, None, None,
                                   f"--decode_from_file={h['dir']}",
                                   f"--decode_to_file={in_dir(h, 'out.txt')}"),
         error=lambda h: h["dir"], check=absent("out.txt")),
    dict(kind="bad file", name="decoder: a damaged vocabulary",
         setup=_damaged_vocab, error=lambda h: h["vocab"]),
    dict(kind="bad file", name="decoder: another vocabulary",
         setup=_other_vocab, error="vocabulary"),
    dict(kind="bad file", name="decoder: hparams.json with a string size",
         setup=lambda h: _edit_json(h, "hparams.json", {"hidden_size": "32"}),
         error="hparams.json is damaged: hidden_size"),
    dict(kind="bad file", name="decoder: model.json cut short",
         setup=lambda h: _edit_json(h, "model.json", "cut"),
         error="model.json is damaged"),
    dict(kind="bad file", name="decoder: the newest checkpoint cut short",
         setup=_cut_checkpoint, error="ckpt-20"),
    dict(kind="bad file", name="decoder: --saved_model_dir at the export root",
         command=lambda h: ["t2t-decoder", f"--saved_model_dir={h['export']}",
                            f"--decode_from_file={source_file(h)}"],
         error="export root"),
    dict(kind="bad file", name="decoder: a --saved_model_dir that is missing",
         command=lambda h: ["t2t-decoder",
                            f"--saved_model_dir={in_dir(h, 'none')}",
                            f"--decode_from_file={source_file(h)}"],
         error=lambda h: in_dir(h, "none")),
    dict(kind="bad name", name="decoder: --decode_hparams=beam_size=zero",
         command=lambda h: decoder(h, None, None,
                                   "--decode_hparams=beam_size=zero",
                                   f"--decode_from_file={source_file(h)}"),
         error="beam_size"),
    refused_run("--hparams=num_heads=0", "num_heads", "--hparams=num_heads=0"),
    refused_run("a misspelt hparams set", "transformer_tiny",
                 "--hparams_set=transformer_tiy"),
    refused_run("a misspelt problem", "translate_synthetic",
                 "--problem=translate_synthetc"),
    refused_run("an hparam that does not exist", "no_such",
                 "--hparams=no_such=1"),
    refused_run("--train_steps=abc", "train_steps", "--train_steps=abc"),
    refused_run("a retired hparams set", "transformer_multi30k",
                 "--hparams_set=transformer_multi30k_v4"),
    dict(kind="bad file", name="trainer: a damaged best/best.json",
         setup=_best_damaged, error="best.json is damaged"),
    dict(kind="bad file", name="trainer: --warm_start_from that is no run",
         command=lambda h: trainer(h, in_dir(h, "out"), "--train_steps=1",
                                   f"--warm_start_from={in_dir(h, 'nothing')}"),
         error=lambda h: in_dir(h, "nothing"), check=absent("out")),
    dict(kind="bad file", name="trainer: a --t2t_usr_dir that fails to import",
         setup=_bad_usr_dir, error="__init__.py", check=absent("out")),
    dict(kind="bad file", name="datagen: a raw file missing",
         setup=lambda h: _raw(h, "a b\n", None), error="train.de",
         check=absent("newdata")),
    dict(kind="bad file", name="datagen: raw files of other line counts",
         setup=lambda h: _raw(h, "a b\nc d\ne f\n", "a b\nc d\n"),
         error="train"),
    dict(kind="bad file", name="bleu: a translation one line short",
         setup=lambda h: _bleu(h, write_file(in_dir(h, "t.txt"), "a b\n"),
                               write_file(in_dir(h, "r.txt"), "a b\nc d\n")),
         error=lambda h: in_dir(h, "t.txt")),
    dict(kind="bad file", name="bleu: a reference that does not exist",
         setup=lambda h: _bleu(h, write_file(in_dir(h, "t.txt"), "a b\n"),
                               in_dir(h, "none.txt")),
         error=lambda h: in_dir(h, "none.txt")),
    dict(kind="bad file", name="exporter: a version that exists",
         command=lambda h: ["t2t-exporter", "--problem=translate_synthetic",
                            f"--data_dir={h['data']}",
                            f"--output_dir={h['run']}",
                            f"--export_dir={h['export']}",
                            "--export_version=1"],
         error="1"),
    dict(kind="bad file", name="avg-all: a folder without checkpoints",
         command=lambda h: ["t2t-avg-all", f"--output_dir={h['dir']}",
                            f"--avg_dir={in_dir(h, 'avg')}"],
         error=lambda h: h["dir"], check=absent("avg")),
    # -- odd bytes ------------------------------------------------------------
    dict(kind="odd bytes", name="decoder: Latin-1 input", setup=_latin1,
         check=same_lines("in.txt", "out.txt")),
    dict(kind="odd bytes", name="decoder: BOM, CRLF and empty lines",
         setup=_odd_lines, check=same_lines("in.txt", "out.txt")),
    dict(kind="odd bytes", name="decoder: NUL, form feed, U+2028, a 40 kB line",
         setup=_nul_and_long, check=same_lines("in.txt", "out.txt")),
    dict(kind="odd bytes", name="decoder: an empty input",
         setup=lambda h: decoder(h, None, None,
                                 f"--decode_from_file={write_file(in_dir(h, 'in.txt'), '')}",
                                 f"--decode_to_file={in_dir(h, 'out.txt')}"),
         check=same_lines("in.txt", "out.txt")),
    dict(kind="odd bytes", name="bleu: a BOM before the translation",
         setup=lambda h: _bleu(h, write_file(in_dir(h, "t.txt"), "\ufeffa b c d\n"),
                               write_file(in_dir(h, "r.txt"), "a b c d\n"),
                               "--metrics=bleu"),
         check=lambda h, done: "" if "= 100.00" in done.stdout else
         "BLEU is not 100: " + done.stdout[-200:]),
    # -- signals ----------------------------------------------------------------
    dict(kind="signal", name="trainer: SIGINT mid-training",
         setup=_sigint_trainer, exit=130, own_changes=True,
         error="stopped by SIGINT",
         during=lambda h, argv: sigint_at_step_100(h, argv),
         check=trained_past_40),
    dict(kind="signal", name="decoder: SIGTERM mid-decode",
         setup=lambda h: (old_output(h), _decode_big(h))[1], exit=143,
         during=signalled(signal.SIGTERM,
                          lambda h: in_dir(h, "out.txt") + ".lock"),
         error="stopped by SIGTERM"),
    dict(kind="signal", name="exporter: SIGTERM mid-export", exit=143,
         command=lambda h: ["t2t-exporter", "--problem=translate_synthetic",
                            f"--data_dir={h['data']}",
                            f"--output_dir={h['run']}",
                            f"--export_dir={in_dir(h, 'export')}",
                            "--export_version=2"],
         during=signalled(signal.SIGTERM, lambda h: in_dir(h, "export")),
         error="stopped by SIGTERM", check=lambda h, done: "" if not
         os.path.exists(in_dir(h, "export", "2")) else "export/2 was left"),
    # -- a full disk ---------------------------------------------------------------
    dict(kind="full disk", name="decoder: the output outgrows the disk",
         setup=lambda h: (old_output(h), _decode_big(h))[1], limit=8192,
         error="out.txt"),
    dict(kind="full disk", name="datagen: the shards outgrow the disk",
         command=lambda h: ["t2t-datagen", "--problem=translate_synthetic",
                            f"--data_dir={in_dir(h, 'newdata')}"],
         limit=100_000, error="newdata"),
    # -- two commands at once -------------------------------------------------------
    dict(kind="concurrent", name="decoder: two decoders, one output file",
         setup=lambda h: (source_file(h, 20000),
                          decoder(h, None, None,
                                  f"--decode_from_file={in_dir(h, 'in.txt')}",
                                  f"--decode_to_file={in_dir(h, 'out.txt')}"))[1],
         during=second_while_first(
             lambda h: decoder(h, None, None,
                               f"--decode_from_file={in_dir(h, 'in.txt')}",
                               f"--decode_to_file={in_dir(h, 'out.txt')}"),
             lambda h: in_dir(h, "out.txt") + ".lock"),
         error="out.txt"),
    dict(kind="concurrent", name="trainer: two trainers, one run directory",
         setup=lambda h: trainer(h, copy_run(h), "--train_steps=100000"),
         during=second_while_first(
             lambda h: trainer(h, in_dir(h, "run"), "--train_steps=100000",
                               "--save_checkpoints_steps=100000"),
             lambda h: os.path.join(in_dir(h, "run"), "trainer.lock")),
         error="run", own_changes=True),
]
