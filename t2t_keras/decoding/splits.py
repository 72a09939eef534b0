"""A split of a problem's data as text: what validation decoding and
t2t-decoder's --decode_from_dataset read."""

from t2t_keras.ids import EOS_ID, PAD_ID


def _real(ids):
  """A record's ids without padding and without the final EOS."""
  ids = [int(i) for i in ids if i != PAD_ID]
  return ids[:-1] if ids and ids[-1] == EOS_ID else ids


def split_text(problem, data_dir, split, max_lines=None):
  """(source ids without EOS, source texts, reference texts) of the first
  ``max_lines`` (None: all) examples of a split of ``problem``'s data."""
  source_vocab = problem.input_vocab(data_dir)
  target_vocab = problem.target_vocab(data_dir)
  examples = problem.examples(split, data_dir)
  if max_lines:
    examples = examples.take(max_lines)
  ids, sources, references = [], [], []
  for example in examples.as_numpy_iterator():
    ids.append(_real(example["inputs"]))
    sources.append(source_vocab.decode(ids[-1]))
    references.append(target_vocab.decode(_real(example["targets"])))
  return ids, sources, references
