"""speed_table.py's worker for PyTorch's nn.Transformer (training only: it
has no search). Run with the bench-torch environment's python.

The paper's model from stock PyTorch parts: shared source/target/output
embeddings scaled by sqrt(d_model), sinusoidal positions, nn.Transformer
(post-norm; PyTorch adds a final LayerNorm to each stack), label-smoothed
cross-entropy, Adam with the paper's betas and epsilon.

  python benchmarks/speed/torch_worker.py --model base|big|toy
      --precision float32|bfloat16 [--quick] [--steps 10]
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np
import torch
from torch import nn

import shapes


class Seq2Seq(nn.Module):
  """Encoder-decoder over a shared vocabulary."""

  def __init__(self, vocab, layers, d_model, d_ff, heads, dropout):
    super().__init__()
    self.d_model = d_model
    self.embedding = nn.Embedding(vocab, d_model)
    self.transformer = nn.Transformer(
        d_model, heads, layers, layers, d_ff, dropout, batch_first=True)
    self.dropout = nn.Dropout(dropout)
    position = torch.arange(512)[:, None]
    rate = torch.exp(torch.arange(0, d_model, 2) * (-math.log(1e4) / d_model))
    table = torch.zeros(512, d_model)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate)
    self.register_buffer("positions", table)

  def embed(self, ids):
    x = self.embedding(ids) * math.sqrt(self.d_model)
    return self.dropout(x + self.positions[:ids.shape[1]])

  def forward(self, inputs, targets):
    shifted = nn.functional.pad(targets[:, :-1], (1, 0))   # start id 0
    mask = nn.Transformer.generate_square_subsequent_mask(
        targets.shape[1], device=targets.device)
    y = self.transformer(self.embed(inputs), self.embed(shifted),
                         tgt_mask=mask, tgt_is_causal=True)
    return y @ self.embedding.weight.T                      # tied output


def main():
  args, s = shapes.worker_args(__doc__, ("train",), ("float32", "bfloat16"))
  torch.set_num_threads(os.cpu_count())
  torch.manual_seed(0)
  model = Seq2Seq(s["vocab"], **shapes.MODELS[args.model])
  model.train()
  optimizer = torch.optim.Adam(model.parameters(), lr=1e-4,
                               betas=(0.9, 0.98), eps=1e-9)
  rng = np.random.RandomState(0)
  inputs = torch.from_numpy(shapes.random_ids(
      rng, s["batch"], s["source_length"], s["vocab"]))
  targets = torch.from_numpy(shapes.random_ids(
      rng, s["batch"], s["target_length"], s["vocab"]))

  def step():
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16,
                        enabled=args.precision == "bfloat16"):
      logits = model(inputs, targets)
    loss = nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1),
        ignore_index=0, label_smoothing=shapes.LABEL_SMOOTHING)
    loss.backward()
    optimizer.step()

  seconds = shapes.timed_steps(step, args.steps)
  tokens = s["batch"] * (s["source_length"] + s["target_length"])
  shapes.emit(seconds_per_step=seconds, tokens_per_s=tokens / seconds,
              version=torch.__version__)


if __name__ == "__main__":
  main()
