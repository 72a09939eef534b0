"""The recipes under recipes/, end to end at a toy scale (a few steps on a
few sentences), so that they cannot rot; the full runs live in the README."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOY = "hidden_size=32,filter_size=64,num_hidden_layers=1,batch_size=512"


def _head(source, target, n):
  with open(source, encoding="utf-8") as f:
    lines = [next(f) for _ in range(n)]
  with open(target, "w", encoding="utf-8") as f:
    f.writelines(lines)


def _run(script, *args, **env):
  environ = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **env)
  # The t2t-* commands of this environment, as a user's activated venv has.
  environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + \
      environ.get("PATH", "")
  return subprocess.run(["bash", os.path.join(REPO, "recipes", script),
                         *args], capture_output=True, text=True, cwd=REPO,
                        env=environ, timeout=900, check=False)


def test_multi30k_recipe_at_toy_scale(shared_data, tmp_path):
  src = tmp_path / "multi30k"
  src.mkdir()
  for name, n in (("train", 300), ("val", 20), ("test_2016_flickr", 20)):
    for lang in ("en", "de"):
      _head(os.path.join(shared_data, "multi30k", f"{name}.{lang}"),
            src / f"{name}.{lang}", n)
  done = _run("multi30k.sh", str(src), str(tmp_path / "data"),
              str(tmp_path / "run"), STEPS="4", EVAL_EVERY="2",
              EVAL_LINES="5", AVERAGE="2", HPARAMS=TOY)
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  out = done.stdout
  for expected in ("$ t2t-avg-all", "BLEU (sacreBLEU, detokenized) = ",
                   "BLEU (tokenized, Moses de", "lowercased",
                   "training wall time:", "step 4: dev loss"):
    assert expected in out, out[-3000:]
  decoded = (tmp_path / "run" / "test_2016_flickr.decoded").read_text(
      encoding="utf-8").splitlines()
  assert len(decoded) == 20
