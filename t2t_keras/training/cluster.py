"""The one place that knows the run's cluster: this process's rank, whether
it is the chief, how many workers there are, and the decisions they share.

Every decision that changes what the training loop does next (stop on a
signal or a time limit, save by the clock) is voted on by every worker and
taken from the sum of the votes, so every worker acts on the same answer
after the same update. The votes ride on the collective each update already
makes: ``Trainer`` appends this worker's ballot (``votes()``, a float32
vector) to the gradients it all-reduces, and hands the summed ballot back
to ``agree`` every ``decide_every`` updates, reading that update's sum
before the next is dispatched (the all-reduce already holds the workers to
one pace; measured no slower than reading the previous update's). Nothing
else is all-reduced per update.

A vote is "any" (true when any worker's value is non-zero) or "mean" (the
mean of the workers' values: each of a worker's local replicas adds its
value once, so the sum is divided by the replicas in sync).

Rare moments that need an answer at once (start-up, an evaluation, the
barrier before a save) use the blocking collectives ``mean``, ``barrier``
and ``gather`` (one small collective a call).
"""

import json

import keras
import numpy as np
import tensorflow as tf

from t2t_keras.training.strategy import num_workers, worker_index

ANY, MEAN = "any", "mean"
# The floats one blocking gather carries at a time.
BLOCK = 64


class Cluster:
  """Rank, chief and shared decisions for ``strategy``'s run.

  Attributes:
    workers: the training processes (1 without TF_CONFIG).
    rank: this one's index among them (the chief is 0).
    chief: whether this process writes the run directory.
  """

  def __init__(self, strategy):
    self.strategy = strategy
    self.workers = max(1, num_workers())
    self.rank = worker_index() if self.workers > 1 else 0
    self.chief = bool(strategy.extended.should_checkpoint)
    self._names, self._kinds, self._mine = [], [], []
    self._agreed = {}
    self.decided_at = None
    self._functions = {}

  # -- votes: carried by every update's all-reduce ---------------------------
  def ballot(self, name, kind):
    """Adds the vote ``name`` (``ANY`` or ``MEAN``), 0 until ``vote``d."""
    if kind not in (ANY, MEAN):
      raise ValueError(f"a vote is {ANY!r} or {MEAN!r}, got {kind!r}")
    if name not in self._names:
      self._names.append(name)
      self._kinds.append(kind)
      self._mine.append(0.0)

  def vote(self, name, value):
    """This worker's value for ``name`` from now on."""
    self._mine[self._names.index(name)] = float(value)

  def votes(self):
    """This worker's ballot: float32 [number of votes]."""
    return np.asarray(self._mine, np.float32)

  def agree(self, summed, step):
    """Takes the ballots summed over every replica (float32 [number of
    votes], as the update's all-reduce gives them) as the decision made
    after update ``step``."""
    self.decided_at = step
    summed = np.asarray(summed, np.float64).reshape(-1)
    replicas = self.strategy.num_replicas_in_sync
    for name, kind, total in zip(self._names, self._kinds, summed):
      self._agreed[name] = bool(total > 0) if kind == ANY else \
          total / replicas

  def agreed(self, name, default=None):
    """The shared answer for ``name`` at the last ``agree`` (``default``
    before the first)."""
    return self._agreed.get(name, default)

  def decision(self, name, step):
    """The shared answer for ``name`` when ``agree`` was called after update
    ``step``, else None: act on it then, at the same step on every
    worker."""
    return self._agreed.get(name) if self.decided_at == step else None

  # -- blocking collectives, for rare moments --------------------------------
  def _collective(self, kind, size):
    key = (kind, size)
    if key not in self._functions:
      strategy = self.strategy

      @tf.function(autograph=False,
                   input_signature=[tf.TensorSpec([size], tf.float64)])
      def run(value):
        def replica():
          context = tf.distribute.get_replica_context()
          mine = tf.identity(value)
          if kind == "gather":
            return context.all_gather(mine[None], axis=0)
          return context.all_reduce(tf.distribute.ReduceOp.MEAN, mine)
        return strategy.experimental_local_results(strategy.run(replica))[0]
      self._functions[key] = run
    return self._functions[key]

  def mean(self, value):
    """The mean over every replica of ``value`` (a float)."""
    return float(self._collective("mean", 1)(
        tf.constant([value], tf.float64))[0])

  def barrier(self):
    """Returns once every worker has called it."""
    if self.workers > 1:
      self.mean(1.0)

  def gather(self, values):
    """Every replica's ``values`` (a list of floats, the same length on all):
    float64 [replicas in sync, len(values)], in replica order (the chief's
    first). Carried in blocks of ``BLOCK`` floats by one traced collective
    (a collective a size would trace a function a size, and TensorFlow
    warns of retracing)."""
    values = np.asarray(values, np.float64).reshape(-1)
    padded = np.zeros(-(-max(values.size, 1) // BLOCK) * BLOCK, np.float64)
    padded[:values.size] = values
    gather = self._collective("gather", BLOCK)
    parts = [np.asarray(gather(tf.constant(padded[k:k + BLOCK])))
             for k in range(0, padded.size, BLOCK)]
    return np.concatenate(parts, axis=1)[:, :values.size]

  def from_chief(self, values):
    """The chief's ``values`` (a list of floats), on every worker."""
    if self.workers == 1:
      return np.asarray(values, np.float64).reshape(-1)
    return self.gather(values)[0]

  def gather_texts(self, texts):
    """Every worker's ``texts`` (a list of strings; any number a worker):
    a list of lists, in rank order (two gathers: sizes, then the texts as
    JSON in UTF-8, four bytes to a float64, exact)."""
    if self.workers == 1:
      return [list(texts)]
    data = json.dumps(list(texts)).encode("utf-8")
    sizes = self.gather([self.rank, len(data)])
    longest = -(-int(sizes[:, 1].max()) // 4)
    words = np.zeros(longest, np.float64)
    packed = np.frombuffer(data + b"\0" * (4 * longest - len(data)),
                           np.uint32)
    words[:len(packed)] = packed
    rows = self.gather(np.concatenate([[self.rank], words]))
    parts = [None] * self.workers
    for size, row in zip(sizes, rows):
      rank, length = int(size[0]), int(size[1])
      if parts[rank] is None:   # each local replica sent the same
        parts[rank] = json.loads(
            row[1:].astype(np.uint32).tobytes()[:length].decode("utf-8"))
    return parts

  # -- the state every worker starts from ------------------------------------
  def fingerprint(self, variables):
    """float64 [2]: the sum and the sum of squares of every value of
    ``variables``: equal on two workers that hold the same state."""
    total = squares = 0.0
    for v in variables:
      value = np.asarray(v.numpy(), np.float64)
      total += float(np.sum(value))
      squares += float(np.sum(np.square(value)))
    return [total, squares]

  def differing(self, values):
    """The ranks whose ``values`` (a list of floats) differ from the
    chief's (one gather)."""
    rows = self.gather([self.rank] + list(values))
    return sorted({int(r[0]) for r in rows
                   if not np.array_equal(r[1:], rows[0][1:])})

  def take_chief_state(self, variables):
    """Sets each of ``variables`` (tf.Variables, as ``state_variables``
    lists them) to the chief's value: one all-reduce to which only the
    chief's first replica adds its values. Floats travel in their own
    dtype, integers as float64 (exact below 2**53)."""
    strategy = self.strategy
    carried = [v.dtype if v.dtype.is_floating else tf.float64
               for v in variables]

    groups = {}   # one all-reduce a dtype: the collective packs a list
    for i, dtype in enumerate(carried):
      groups.setdefault(dtype, []).append(i)

    def replica():
      context = tf.distribute.get_replica_context()
      first = tf.equal(context.replica_id_in_sync_group, 0)
      received = [None] * len(variables)
      for dtype, places in groups.items():
        values = [tf.cast(variables[i].read_value(), dtype) for i in places]
        for i, value in zip(places, context.all_reduce(
            tf.distribute.ReduceOp.SUM,
            [tf.where(first, v, tf.zeros_like(v)) for v in values])):
          received[i] = value
      return received

    @tf.function(autograph=False)
    def receive():
      return [strategy.experimental_local_results(value)[0]
              for value in strategy.run(replica)]
    for v, value in zip(variables, receive()):
      v.assign(tf.cast(value, v.dtype))


def state_variables(checkpoint):
  """The tf.Variables a ``tf.train.Checkpoint`` saves (Keras variables as
  the tf.Variable each holds), each once."""
  # Made at the first save or restore: made now, so that a worker that
  # restored nothing lists the same variables as one that did.
  checkpoint.save_counter
  found, seen = [], set()
  for node in tf.train.TrackableView(checkpoint).descendants():
    if isinstance(node, keras.Variable):
      node = node.value
    if isinstance(node, tf.Variable) and id(node) not in seen:
      seen.add(id(node))
      found.append(node)
  return found
