"""BPE-dropout (Provilkov et al., ACL 2020): the training pairs encoded
again several times, each time skipping every BPE merge with probability p,
so that the model meets a word split in several ways and leans less on one
segmentation; decoding, dev and test keep the plain one.

``t2t-datagen --bpe_dropout=0.1 --bpe_dropout_copies=40`` writes, beside
the plain train split, copies ``train.sampled0`` ... ``train.sampled39``:
each a pass over every training pair with its own draw; an interrupted
datagen resumes at the first copy that is missing. Copy k is drawn with
SentencePiece's sampling seeded with k, which repeats within a process but
not across processes (measured: two datagen runs, different copies), so the
copies on disk, not the flags, make a run repeatable. The manifest records
p and the number of copies. Training reads copy 0, then 1, ..., each
shuffled as the plain split would be, and starts again at copy 0 after the
last: epoch k sees copy k mod K. Exact resume of training holds, since the
stream read from disk is as deterministic as the plain one.
"""

import functools

from t2t_keras.errors import UserError

DEFAULT_COPIES = 40


def split_name(index):
  """The split name under which copy ``index`` is encoded."""
  return f"train.sampled{index}"


def check(dropout, copies, model_type):
  """A one-line error for settings datagen cannot write."""
  if not 0.0 <= dropout < 1.0:
    raise UserError(f"--bpe_dropout must be in [0, 1), got {dropout:g}")
  if dropout and copies < 1:
    raise UserError(f"--bpe_dropout_copies must be >= 1, got {copies}")
  if dropout and model_type != "bpe":
    raise UserError(f"--bpe_dropout needs a bpe vocabulary, not "
                    f"{model_type!r} (vocab_model_type)")


class SamplingVocab:
  """A vocabulary whose ``encode`` draws a BPE-dropout segmentation; every
  other attribute is the wrapped vocabulary's (so problems' ``encode_pair``
  work unchanged)."""

  def __init__(self, vocab, dropout):
    self._vocab = vocab
    self._dropout = dropout

  def encode(self, text):
    """str -> list of ids of one random segmentation, without EOS."""
    return self._vocab.encode_sampled(text, self._dropout)

  def __getattr__(self, name):
    return getattr(self._vocab, name)


def write_copies(problem, source, vocab, data_dir, dropout, copies):
  """Encodes ``copies`` BPE-dropout passes over ``source``'s train split
  into their own shards, skipping those already written (quietly: the
  caller logs one line for all)."""
  sampling = SamplingVocab(vocab, dropout)
  for index in range(copies):
    name = split_name(index)
    if problem.split_done(data_dir, name):
      continue
    vocab.seed_sampling(index)
    problem.write_split(source, sampling, data_dir, "train",
                        log=lambda line: None, name=name)


def one_after_another(datasets):
  """The copies' datasets concatenated: copy 0's examples, then copy 1's."""
  return functools.reduce(lambda a, b: a.concatenate(b), datasets)
