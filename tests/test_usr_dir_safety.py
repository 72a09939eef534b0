"""A run's recorded --t2t_usr_dir is code: later commands import it only
when they are given --t2t_usr_dir, and without it say so in one line."""

import os
import textwrap

from commands import t2t_command

USR = """
import os
from t2t_keras import registry

with open(os.environ["USR_DIR_MARK"], "a", encoding="utf-8") as f:
  f.write("imported\\n")


@registry.register_model("my_transformer")
class MyTransformer(registry.model("transformer")):
  pass
"""


def test_recorded_usr_dir_runs_only_when_asked(trained_run, tmp_path):
  data, _ = trained_run
  usr = tmp_path / "my_usr"
  usr.mkdir()
  (usr / "__init__.py").write_text(textwrap.dedent(USR), encoding="utf-8")
  mark = tmp_path / "imported.txt"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", USR_DIR_MARK=str(mark))
  run = tmp_path / "run"
  trained = t2t_command(
      "t2t_trainer", f"--t2t_usr_dir={usr}", "--model=my_transformer",
      "--problem=translate_synthetic", "--hparams_set=transformer_tiny",
      "--hparams=hidden_size=32,filter_size=64,num_hidden_layers=1",
      f"--data_dir={data}", f"--output_dir={run}", "--train_steps=2",
      "--eval_bleu=false", env=env)
  assert trained.returncode == 0, trained.stderr[-2000:]
  mark.unlink()
  source = tmp_path / "in.txt"
  source.write_text("the dog sees a cat\n", encoding="utf-8")
  decode = ["--problem=translate_synthetic", f"--data_dir={data}",
            f"--output_dir={run}", f"--decode_from_file={source}"]
  refused = t2t_command("t2t_decoder", *decode, env=env)
  assert refused.returncode == 2, refused.stderr[-2000:]
  assert refused.stderr.strip().splitlines() == [
      f"error: {run} was trained with --t2t_usr_dir={usr}, which registers "
      "its model 'my_transformer'; a run's code is imported only when "
      f"asked: pass --t2t_usr_dir={usr} (or another directory that "
      "registers it) if you trust it"]
  assert not mark.exists()             # its code never ran
  decoded = t2t_command("t2t_decoder", *decode, f"--t2t_usr_dir={usr}",
                        env=env)
  assert decoded.returncode == 0, decoded.stderr[-2000:]
  assert len(decoded.stdout.splitlines()) == 1
  assert mark.read_text(encoding="utf-8") == "imported\n"
