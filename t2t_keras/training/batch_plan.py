"""The line a run opens with about its devices and its batch: what one
update holds on this many replicas, and the accumulation that makes it the
paper's (section 5.1: "Each training batch contained a set of sentence
pairs containing approximately 25000 source tokens and 25000 target
tokens").

``batch_size`` is per replica (tensor2tensor's convention), so one GPU and
eight train different recipes unless ``gradient_accumulation_steps`` makes
up the difference; this line says which.
"""

import collections
import math

PAPER_TOKENS = 25000   # each side, one update (section 5.1)


def device_summary(devices):
  """'2 x CPU', '8 x GPU' or '4 x GPU, 1 x CPU' from device names such as
  '/job:worker/replica:0/task:0/device:GPU:3'."""
  kinds = collections.Counter(name.rsplit("device:", 1)[-1].split(":")[0]
                              for name in devices)
  return ", ".join(f"{n} x {kind}" for kind, n in sorted(kinds.items()))


def paper_accumulation(batch_size, replicas):
  """Micro-batches per update that give at least the paper's ~25,000
  tokens a side with ``batch_size`` tokens (padding included) on each of
  ``replicas``."""
  return max(1, math.ceil(PAPER_TOKENS / (batch_size * replicas)))


def describe(devices, replicas, workers, batch_size, accumulation,
             activation_dtype):
  """One line: the local ``devices`` (names), the global ``replicas`` over
  ``workers`` processes, the precision, the per-replica and global batch in
  tokens, and the accumulation that gives the paper's batch here."""
  per_update = batch_size * replicas * accumulation
  precision = activation_dtype + (" with dynamic loss scaling"
                                  if activation_dtype == "float16" else "")
  where = device_summary(devices) + (
      f" on each of {workers} workers" if workers > 1 else "")
  need = paper_accumulation(batch_size, replicas)
  paper = (f"the paper's ~{PAPER_TOKENS:,} + {PAPER_TOKENS:,} tokens an "
           f"update take gradient_accumulation_steps={need} at this "
           f"batch_size on {replicas} replica(s)")
  if need == accumulation:
    paper += " (as set)"
  return (f"devices: {where} ({replicas} replica(s)), {precision}; "
          f"batch: {batch_size:,} tokens a side per replica (padding "
          f"included) x {replicas} replica(s) x {accumulation} "
          f"micro-batch(es) = {per_update:,} an update; {paper}")
