"""Nothing lost on the staged paths (issue: every write a transaction):
--decode_to_file written into a device or FIFO, never replaced; a decode
SIGKILLed midway goes on from its last window, byte-identical; datagen
--overwrite with bad new files keeps the old data byte for byte. The
hostile suite (scripts/hostile_user.py, hostile_kills.py) tries more."""

import json
import os
import signal
import stat
import subprocess
import time

from commands import python, t2t_command as command

LINE = "the big red dog sees a small cat near the old house"


def _decode(trained_run, source, target, *more):
  data, run = trained_run
  return ["--problem=translate_synthetic", f"--data_dir={data}",
          f"--output_dir={run}", f"--decode_from_file={source}",
          f"--decode_to_file={target}", "--decode_hparams=beam_size=1",
          *more]


def test_a_device_and_a_fifo_are_written_into(trained_run, tmp_path):
  source = tmp_path / "in.txt"
  source.write_text((LINE + "\n") * 12, encoding="utf-8")
  device = tmp_path / "null"
  os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))   # as /dev/null
  done = command("t2t_decoder", *_decode(trained_run, source, device))
  assert done.returncode == 0, done.stderr
  assert stat.S_ISCHR(os.stat(device).st_mode)
  fifo = tmp_path / "fifo"
  os.mkfifo(fifo)
  reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
  done = command("t2t_decoder", *_decode(trained_run, source, fifo))
  assert done.returncode == 0, done.stderr
  assert reader.communicate(timeout=60)[0].count(b"\n") == 12
  assert stat.S_ISFIFO(os.stat(fifo).st_mode)
  assert sorted(os.listdir(tmp_path)) == ["fifo", "in.txt", "null"]


def test_a_killed_decode_goes_on_from_its_last_window(trained_run, tmp_path):
  source = tmp_path / "in.txt"
  words = LINE.split()
  source.write_text("".join(" ".join(words[:3 + k % 8]) + "\n"
                            for k in range(400)), encoding="utf-8")
  whole, resumed = tmp_path / "whole.txt", tmp_path / "resumed.txt"
  args = ("--window_lines=20",)
  done = command("t2t_decoder", *_decode(trained_run, source, whole, *args))
  assert done.returncode == 0, done.stderr
  record = tmp_path / ".resumed.txt.resume.json"
  process = subprocess.Popen(
      python("-m", "t2t_keras.bin.t2t_decoder",
             *_decode(trained_run, source, resumed, *args)),
      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  lines = 0
  deadline = time.time() + 240
  while time.time() < deadline and lines < 100 and process.poll() is None:
    time.sleep(0.02)
    try:
      lines = json.loads(record.read_text(encoding="utf-8"))["lines"]
    except (OSError, ValueError):
      pass
  process.send_signal(signal.SIGKILL)
  process.wait()
  assert 0 < lines < 400 and not resumed.exists()
  done = command("t2t_decoder", *_decode(trained_run, source, resumed, *args))
  assert done.returncode == 0, done.stderr
  assert "going on after line" in done.stderr, done.stderr
  assert resumed.read_bytes() == whole.read_bytes()
  assert sorted(os.listdir(tmp_path)) == ["in.txt", "resumed.txt",
                                          "whole.txt"]


def test_overwrite_with_bad_new_files_keeps_the_old_data(tmp_path):
  pairs = [("a small dog runs", "kemi jeba dog"),
           ("the old man sees a cat", "man old cat jeba")] * 40

  def raw(name, cut):
    folder = tmp_path / name
    folder.mkdir()
    for split in ("train", "dev"):
      (folder / f"{split}.en").write_text(
          "".join(s + "\n" for s, _ in pairs), encoding="utf-8")
      rows = pairs[:len(pairs) - cut] if split == "train" else pairs
      (folder / f"{split}.de").write_text(
          "".join(t + "\n" for _, t in rows), encoding="utf-8")
    return folder

  data = tmp_path / "data"
  base = ["--problem=translate_local", "--source_lang=en",
          "--target_lang=de", "--vocab_size=300", f"--data_dir={data}"]
  done = command("t2t_datagen", *base, f"--raw_data_dir={raw('old', 0)}")
  assert done.returncode == 0, done.stderr
  before = {p: (data / p).read_bytes() for p in os.listdir(data)}
  done = command("t2t_datagen", *base, f"--raw_data_dir={raw('new', 5)}",
                 "--overwrite")
  assert done.returncode == 2 and "parallel files differ" in done.stderr
  assert {p: (data / p).read_bytes() for p in os.listdir(data)} == before
