"""The data side of benchmarks/val_sweep_jax.py, with no JAX in it: the
datagen'd problem exported to one .npz (TensorFlow, here), read back (numpy
and SentencePiece, on the accelerator's machine), cut into the trainer's
length-bucketed batches, and the settings file read.

Shapes: a batch is ``{"inputs": [rows, width], "targets": [rows, width]}``
int32, 0-padded; ``split_seqs`` turns a flat id array and its lengths into
one array a sequence.
"""

import os
import sys

import numpy as np

from t2t_keras.buckets import bucket_boundaries


# -- export (TensorFlow) ------------------------------------------------------
def export(args):
  """Writes the problem's train/dev ids, the val references and the
  vocabulary to one .npz."""
  import glob
  from t2t_keras.data import pipeline
  arrays = {}
  for split in ("train", "dev"):
    files = glob.glob(os.path.join(args.data_dir,
                                   f"{args.problem}-{split}-*"))
    pairs = [(ex["inputs"].numpy(), ex["targets"].numpy())
             for ex in pipeline.read_records(files)]
    for i, key in enumerate(("inputs", "targets")):
      seqs = [p[i] for p in pairs]
      arrays[f"{split}_{key}"] = np.concatenate(seqs).astype(np.int32)
      arrays[f"{split}_{key}_len"] = np.array([len(s) for s in seqs],
                                              np.int32)
  with open(args.references, encoding="utf-8") as f:
    refs = f.read().split("\n")[:len(arrays["dev_inputs_len"])]
  if len(refs) != len(arrays["dev_inputs_len"]):
    sys.exit(f"{args.references}: {len(refs)} lines, expected "
             f"{len(arrays['dev_inputs_len'])} (one per dev pair, in order)")
  vocab, = glob.glob(os.path.join(args.data_dir, f"vocab.{args.problem}.*"))
  with open(vocab, "rb") as f:
    arrays["vocab"] = np.frombuffer(f.read(), np.uint8)
  arrays["dev_references"] = np.array(refs)
  os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
  np.savez_compressed(args.out, **arrays)
  print(f"{args.out}: {len(arrays['train_inputs_len']):,} training and "
        f"{len(refs):,} val pairs")


def split_seqs(flat, lengths):
  return np.split(flat, np.cumsum(lengths)[:-1])


# -- batches ------------------------------------------------------------------
def batches(src, tgt, batch_size, max_length, seed, grid=16):
  """Endless training batches like the trainer's: shuffled examples into
  length buckets, a bucket of bound b emitting ``batch_size // b`` examples.
  Each batch is padded to a multiple of ``grid`` positions and to the
  largest row count of that padded length, so that few shapes compile;
  padding rows and positions are 0 and count for nothing."""
  bounds = bucket_boundaries(max_length)
  lengths = np.maximum([len(s) for s in src], [len(t) for t in tgt])
  keep = np.flatnonzero(lengths <= max_length)
  bucket_of = np.searchsorted(bounds, lengths)
  padded = {}
  for b in bounds:
    width = -(-b // grid) * grid
    padded[width] = max(padded.get(width, 0), max(1, batch_size // b))
  rng = np.random.RandomState(seed)
  pending = {}
  while True:
    for i in rng.permutation(keep):
      bucket = pending.setdefault(bucket_of[i], [])
      bucket.append(i)
      b = bounds[bucket_of[i]]
      if len(bucket) == max(1, batch_size // b):
        width = -(-b // grid) * grid
        out = {k: np.zeros((padded[width], width), np.int32)
               for k in ("inputs", "targets")}
        for row, j in enumerate(bucket):
          out["inputs"][row, :len(src[j])] = src[j]
          out["targets"][row, :len(tgt[j])] = tgt[j]
        pending[bucket_of[i]] = []
        yield out



def read_settings(path):
  """[(name, hparams_set, overrides, seed)] from a SWEEP.txt."""
  settings = []
  with open(path, encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
      fields = line.split("#")[0].split()
      if not fields:
        continue
      if len(fields) not in (3, 4):
        sys.exit(f"{path}:{number}: expected 'name hparams_set overrides "
                 f"[seed]', got {line.strip()!r}")
      overrides = "" if fields[2] == "-" else fields[2]
      seed = int(fields[3]) if len(fields) == 4 else 1234
      settings.append((fields[0], fields[1], overrides, seed))
  return settings


def pad_rows(seqs, width, rows):
  out = np.zeros((rows, width), np.int32)
  for i, s in enumerate(seqs):
    out[i, :len(s)] = s[:width]
  return out



def load_corpus(args):
  """(train (sources, targets), dev (sources, targets), val references,
  vocabulary) from the exported file, once for every setting."""
  import sentencepiece
  data = np.load(args.data)
  pair = lambda split: tuple(
      split_seqs(data[f"{split}_{k}"], data[f"{split}_{k}_len"])
      for k in ("inputs", "targets"))
  dev, refs = pair("dev"), [str(r) for r in data["dev_references"]]
  if args.dev_lines:
    dev = tuple(seqs[:args.dev_lines] for seqs in dev)
    refs = refs[:args.dev_lines]
  vocab = sentencepiece.SentencePieceProcessor(
      model_proto=data["vocab"].tobytes())
  return pair("train"), dev, refs, vocab
