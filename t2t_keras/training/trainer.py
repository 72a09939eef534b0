"""The training loop under a tf.distribute strategy (section 5).

One update = ``gradient_accumulation_steps`` micro-batches on every replica.
The loss of an update (the objective's: by default the label-smoothed
cross-entropy, ``training.objective``) is averaged over the
non-padding target tokens of all of them together, so k accumulated
micro-batches on r replicas give the same update as one batch k * r times
larger (not an average of per-replica or per-micro-batch means). Without
accumulation the global count is summed before the backward pass and each
replica's loss sum divided by it; with accumulation each replica adds up
unnormalized gradients and token counts, and the update divides by the
global count.

Steps are tf.functions whose inputs have unknown batch and length, so
bucketed shapes never retrace them. An update's figures (loss sum, tokens,
gradient norm) and the workers' votes (``training.cluster``) ride on the
all-reduce its gradients make; they stay on the first local replica's
device, and the host reads them only when a line, a check or a decision
needs them (with several workers, the decisions after every update).
"""

import contextlib
import math

import tensorflow as tf

from t2t_keras.kernels.distribute import no_gradient_all_reduce
from t2t_keras.io.logs import log_line
from t2t_keras.training.checkpoints import Checkpointer
from t2t_keras.training.cluster import Cluster
from t2t_keras.training.config import CheckpointPolicy
from t2t_keras.training.hooks import (CheckpointHook, ProgressHook, StepLogs,
                                     SummaryHook)
from t2t_keras.training.loss import count_tokens
from t2t_keras.training.loss_check import LossCheck
from t2t_keras.training.objective import Softmax
from t2t_keras.training.optimizer import optimizer_from_hparams

_FEATURE_SPEC = {"inputs": tf.TensorSpec([None, None], tf.int64),
                 "targets": tf.TensorSpec([None, None], tf.int64)}
_VOTES_SPEC = tf.TensorSpec([None], tf.float32)
_SUM = tf.distribute.ReduceOp.SUM


def _all_reduce_sum(value):
  return tf.distribute.get_replica_context().all_reduce(_SUM, value)


class Trainer:
  """Trains a model built by ``build_model()`` under ``strategy``.

  Args:
    build_model: a function returning a built Keras model; called inside the
      strategy's scope (and after the dtype policy is set).
    hparams: the run's HParams (optimizer, schedule, label smoothing,
      gradient_accumulation_steps).
    strategy: a tf.distribute strategy; default: no replication.
    output_dir: checkpoints and summaries; None keeps nothing on disk.
    checkpoints: a ``CheckpointPolicy``.
    jit_compile: compile the steps with XLA.
    objective: what the steps minimize and score (``training.objective``);
      default the paper's softmax over the vocabulary.
    shared_dir: on a multi-worker run's other workers, the chief's run
      directory, whose checkpoints ``restore`` reads (``output_dir`` is then
      the worker's temporary one).
  """

  def __init__(self, build_model, hparams, strategy=None, output_dir=None,
               checkpoints=CheckpointPolicy(), jit_compile=False,
               train_steps=None, hooks=(), objective=None, shared_dir=None):
    self.hparams = hparams
    self.objective = objective or Softmax()
    self.hooks = list(hooks)
    self.stop_reason = None      # a hook's reason to end fit
    self.stopped_for_peer = False  # stopped for another worker's signal
    self.interrupted = None      # the signal that stopped fit, if one did
    self.seconds_left = math.inf  # a hook's bound on the time left
    self._begun = False
    self.strategy = strategy or tf.distribute.get_strategy()
    self.cluster = Cluster(self.strategy)
    self.decide_every = 1   # updates between shared decisions (``fit``)
    self.accumulation = max(1, int(hparams.get(
        "gradient_accumulation_steps", 1)))
    with self.strategy.scope():
      self.model = build_model()
      self.optimizer = optimizer_from_hparams(hparams, train_steps)
      self.optimizer.build(self.model.trainable_variables)
      # We all-reduce the gradients ourselves (once); Keras must not.
      no_gradient_all_reduce(self.optimizer)
      if self.accumulation > 1:
        # Per-replica sums of gradients and tokens over the micro-batches.
        local_sum = dict(trainable=False,
                         synchronization=tf.VariableSynchronization.ON_READ,
                         aggregation=tf.VariableAggregation.SUM)
        self._accumulators = [tf.Variable(tf.zeros_like(v), **local_sum)
                              for v in self.model.trainable_variables]
        self._accumulated_tokens = tf.Variable(0.0, **local_sum)
        self._accumulated_loss = tf.Variable(0.0, **local_sum)
    # Keras keeps the dropout masks' random state in seed-generator
    # variables that TensorFlow's object-based checkpoints do not see; they
    # are saved beside the model so that a resumed run draws the masks an
    # unbroken one would have drawn.
    seeds = [v for v in self.model.variables
             if v.path.endswith("seed_generator_state")]
    saved = {}
    for hook in self.hooks:
      hook.attach(self)
      saved.update(hook.trackables())
    self.checkpointer = Checkpointer(
        output_dir, checkpoints, shared_dir=shared_dir, model=self.model,
        optimizer=self.optimizer,
        rng=tf.train.Checkpoint(**{f"state_{i}": v
                                   for i, v in enumerate(seeds)}), **saved)
    # TensorBoard's curves from the chief only: one run folder a curve.
    self.summaries = (tf.summary.create_file_writer(f"{output_dir}/train")
                      if output_dir and shared_dir is None else None)
    self.loss_check = LossCheck(self.checkpointer)
    self.checkpointer.before_save = self.check_finite
    self.jit_compile = jit_compile
    # With several replicas XLA compiles each replica's forward and backward
    # pass; the all-reduce and the update stay outside it (one compiled
    # function cannot span the replicas' devices).
    self._jit_per_replica = (jit_compile and
                             self.strategy.num_replicas_in_sync > 1)
    self._replica_grads = tf.function(self._compute_grads, jit_compile=True,
                                      autograph=False)
    self._input_spec = None
    self._functions = {}
    self._step = None       # the host's count of updates (see ``step``)
    self._no_votes = tf.zeros([0], tf.float32)
    self._loss_scaled = hasattr(self.optimizer, "dynamic_scale")

  def _compiled(self, name, fn, takes=("batch",)):
    """tf.function of ``fn``, traced once: a batch's signature is the
    distributed datasets' element spec (unknown batch and length), or plain
    [None, None] tensors before any dataset was distributed; the votes are
    float32 [None]."""
    if name not in self._functions:
      specs = {"batch": self._input_spec or _FEATURE_SPEC,
               "votes": _VOTES_SPEC}
      self._functions[name] = tf.function(
          fn, input_signature=[specs[t] for t in takes], autograph=False,
          jit_compile=self.jit_compile and not self._jit_per_replica)
    return self._functions[name]

  @property
  def _update_step(self):
    return self._compiled("update", self._on_replicas(self._replica_update),
                          takes=("batch", "votes"))

  @property
  def _accumulate_step(self):
    return self._compiled("accumulate",
                          self._on_replicas(self._replica_accumulate))

  @property
  def _apply_step(self):
    return self._compiled("apply", self._on_replicas(self._replica_apply),
                          takes=("votes",))

  @property
  def _eval_step(self):
    return self._compiled("eval", self._reduced(self._replica_score))

  @property
  def step(self):
    """Number of updates so far: counted on the host during ``fit`` (one
    update, one step: under float16 loss scaling an update whose gradients
    overflowed counts too), read from the optimizer otherwise."""
    if self._step is None:
      self._step = int(self.optimizer.iterations.numpy())
    return self._step

  def forget_step(self):
    """The step is read from the optimizer again (its state was set from
    elsewhere)."""
    self._step = None

  def restore(self, log=log_line):
    """Restores the newest checkpoint that reads (see ``Checkpointer``);
    returns its path or None."""
    self._step = None
    return self.checkpointer.restore(
        log, source_dir=self.checkpointer.shared_dir)

  def check_finite(self):
    """``NonFiniteLossError`` if an update since the last check had a
    non-finite loss (``loss_check``); ``fit`` calls it at its progress
    lines and before every save."""
    self.loss_check.check()

  def weights_for_use(self):
    """A context under which the model holds the weights checkpoints,
    evaluation and export see (each hook's ``weights_for_use``)."""
    stack = contextlib.ExitStack()
    for hook in self.hooks:
      stack.enter_context(hook.weights_for_use(self))
    return stack

  def begin(self, restored):
    """Tells the hooks the run starts: from a restored checkpoint
    (``restored``), or fresh or warm-started. ``fit`` calls it once if the
    caller did not."""
    self._begun = True
    for hook in self.hooks:
      hook.begin(self, restored)

  # -- replica functions ------------------------------------------------------
  def _on_replicas(self, replica_fn):
    """A step that runs ``replica_fn`` on every replica and returns its
    results (the same on every replica: all-reduced) from the first local
    one, on that replica's device."""
    def step(*args):
      results = self.strategy.run(replica_fn, args=args)
      return tuple(self.strategy.experimental_local_results(r)[0]
                   for r in results)
    return step

  def _reduced(self, replica_fn):
    """A step whose per-replica results are summed (on the host)."""
    def step(*args):
      results = self.strategy.run(replica_fn, args=args)
      return tuple(self.strategy.reduce(_SUM, r, axis=None) for r in results)
    return step

  def _loss_and_grads(self, features, divisor=1.0):
    """(loss_sum, tokens, gradients of loss_sum / divisor): compiled by XLA
    on each replica when the whole step cannot be."""
    if self._jit_per_replica:
      return self._replica_grads(features, tf.convert_to_tensor(
          divisor, tf.float32))
    return self._compute_grads(features, divisor)

  def _compute_grads(self, features, divisor):
    with tf.GradientTape() as tape:
      loss_sum, tokens = self.objective.loss(
          self.model, features, self.hparams.label_smoothing)
      scaled = self.optimizer.scale_loss(loss_sum / divisor)
    grads = tape.gradient(scaled, self.model.trainable_variables)
    return loss_sum, tokens, grads

  def _apply(self, grads, figures, votes):
    """Sums this replica's gradients (already divided by the global token
    count), ``figures`` (float32 [n]: its loss sum...) and ``votes`` over all
    replicas in one all-reduce and applies the gradients. Returns (the
    summed figures, the global norm of the gradients (unscaled under float16
    loss scaling), the summed votes)."""
    # Dense: an embedding's IndexedSlices would take TensorFlow's
    # gather-to-one-device path ("Efficient allreduce is not supported for
    # IndexedSlices"), not the collective the other gradients ride on.
    grads = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices)
             else g for g in grads]
    extra = tf.concat([tf.cast(figures, tf.float32), votes], 0)
    reduced = _all_reduce_sum(grads + [extra])
    grads, extra = reduced[:-1], reduced[-1]
    for hook in self.hooks:   # e.g. training.finetune's
      grads = hook.adjust_gradients(self, grads,
                                    self.model.trainable_variables)
    norm = tf.linalg.global_norm(grads)
    # Under float16 the gradients are of the scaled loss: report the norm of
    # the true gradients (read the scale before the update changes it).
    norm = norm / tf.cast(self.gradient_scale(), norm.dtype)
    # Under float16 an update whose gradients overflowed is skipped (the
    # scale halves) but counted, as Keras 2's and TensorFlow 1's loss scaling
    # counted it: one update, one step, so the host never reads the
    # optimizer to know the step.
    counted = self.optimizer.iterations + 1 if self._loss_scaled else None
    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
    if counted is not None:
      self.optimizer.iterations.assign(counted)
    size = figures.shape[0]
    return extra[:size], norm, extra[size:]

  def gradient_scale(self):
    """What the gradients a hook adjusts are multiplied by: float16's loss
    scale under loss scaling, else 1. A hook that adds a gradient of its own
    multiplies it by this (the optimizer divides every gradient by it)."""
    scale = getattr(self.optimizer, "dynamic_scale", None)
    return tf.constant(1.0) if scale is None else \
        tf.cast(scale, tf.float32)

  def _replica_update(self, features, votes):
    # The global token count is known before the backward pass: the loss is
    # divided by it, not every gradient after (one pass over all of them).
    tokens = _all_reduce_sum(count_tokens(features["targets"]))
    loss_sum, _, grads = self._loss_and_grads(features,
                                              tf.maximum(tokens, 1.0))
    summed, norm, votes = self._apply(grads, loss_sum[None], votes)
    return summed[0] / tf.maximum(tokens, 1.0), tokens, norm, votes

  def _replica_accumulate(self, features):
    # Each micro-batch's backward pass is of its mean loss (a loss sum times
    # float16's loss scale overflows where one batch's mean would not); its
    # float32 gradients are multiplied back by its token count, so the
    # accumulators still hold the gradients of the loss sums.
    local = tf.maximum(count_tokens(features["targets"]), 1.0)
    loss_sum, tokens, grads = self._loss_and_grads(features, local)
    for accumulator, grad in zip(self._accumulators, grads):
      if isinstance(grad, tf.IndexedSlices):
        grad = tf.convert_to_tensor(grad)
      accumulator.assign_add(grad * tf.cast(local, grad.dtype))
    self._accumulated_tokens.assign_add(tokens)
    self._accumulated_loss.assign_add(loss_sum)
    return (tokens,)

  def _replica_apply(self, votes):
    tokens = _all_reduce_sum(self._accumulated_tokens.read_value())
    global_tokens = tf.maximum(tokens, 1.0)
    summed, norm, votes = self._apply(
        [a.read_value() / global_tokens for a in self._accumulators],
        self._accumulated_loss.read_value()[None], votes)
    for accumulator in self._accumulators:
      accumulator.assign(tf.zeros_like(accumulator))
    self._accumulated_tokens.assign(0.0)
    self._accumulated_loss.assign(0.0)
    return summed[0] / global_tokens, tokens, norm, votes

  def _replica_score(self, features):
    return self.objective.score(self.model, features)

  # -- public steps -------------------------------------------------------------
  def train_step(self, micro_batches):
    """One update from ``gradient_accumulation_steps`` (distributed)
    micro-batches. Returns (mean smoothed loss per token, tokens, gradient
    norm), read from the device."""
    loss, tokens, norm, _ = self._train_step(micro_batches)
    return float(loss), float(tokens), float(norm)

  def _train_step(self, micro_batches):
    """``train_step``'s figures (mean loss per token, tokens, norm) and the
    summed votes as tensors made on the first local replica's device, not
    read: the host goes on to the next update while the devices run this
    one."""
    micro_batches = list(micro_batches)
    if len(micro_batches) != self.accumulation:
      raise ValueError(f"expected {self.accumulation} micro-batches, got "
                       f"{len(micro_batches)}")
    # One worker decides alone (``fit`` never reads the summed votes): its
    # updates carry an empty ballot, made once.
    votes = (self._no_votes if self.cluster.workers == 1 else
             tf.constant(self.cluster.votes()))
    if self.accumulation == 1:
      return self._update_step(micro_batches[0], votes)
    for batch in micro_batches:
      self._accumulate_step(batch)
    return self._apply_step(votes)

  def distribute(self, dataset_fn):
    """``dataset_fn(input_context)`` -> per-replica dataset, distributed.
    With one input pipeline its batches go to the replicas in turn."""
    dataset = self.strategy.distribute_datasets_from_function(dataset_fn)
    if self._input_spec is None:
      self._input_spec = dataset.element_spec
    return dataset

  def feed(self, training_feed, position=None):
    """Takes the training batches from a started ``feed.TrainingFeed``
    (returned, to pass to ``fit``); with ``position``
    (``feed.DataPosition``), its place in the stream is saved with every
    checkpoint."""
    if self._input_spec is None:
      self._input_spec = training_feed.element_spec
    self.checkpointer.position = position
    return training_feed

  def evaluate(self, dataset):
    """Unsmoothed loss, per-token perplexity and accuracy over a (distributed)
    dataset."""
    loss_sum = tokens = correct = 0.0
    for features in dataset:
      l, n, c = self._eval_step(features)
      loss_sum, tokens, correct = (loss_sum + float(l), tokens + float(n),
                                   correct + float(c))
    loss = loss_sum / max(tokens, 1.0)
    return {"loss": loss, "perplexity": math.exp(min(loss, 50.0)),
            "accuracy": correct / max(tokens, 1.0)}

  def fit(self, data, train_steps, log_every=100, log=log_line,
          total_steps=None, hooks=()):
    """Trains until ``train_steps`` updates have been applied in total
    (counting those restored from a checkpoint) or a hook sets
    ``stop_reason``. ``data`` is a distributed dataset or an iterator over
    one; pass the same iterator to successive calls so that each continues
    the stream. After each update the hooks run in order: the trainer's
    own (``hooks`` at construction), progress lines every ``log_every``
    (with ``total_steps``, default ``train_steps``, as the goal),
    TensorBoard summaries, checkpoints, then this call's ``hooks``."""
    total_steps = total_steps or train_steps
    if not self._begun:
      self.begin(restored=self.step > 0)
    loop = self.hooks + [ProgressHook(log_every, total_steps, log)]
    if self.summaries is not None:
      loop.append(SummaryHook(self.summaries))
    loop += [CheckpointHook()] + list(hooks)
    for hook in loop[len(self.hooks):]:
      hook.begin(self, restored=self.step > 0)
    iterator = iter(data)
    step = self.step
    # Several workers decide together after every update, from the votes
    # it summed: a signal on one worker stops all after the update that
    # follows it (the host reads them before dispatching the next update;
    # the update's all-reduce already holds every worker to its pace).
    self.decide_every = 1
    while step < train_steps and self.stop_reason is None:
      micro = [next(iterator) for _ in range(self.accumulation)]
      loss, tokens, norm, votes = self._train_step(micro)
      step = self._step = step + 1
      if self.cluster.workers > 1 and step % self.decide_every == 0:
        self.cluster.agree(votes.numpy(), step)
      self.loss_check.add(step, loss)
      if step % log_every == 0 or step >= train_steps:
        self.check_finite()
      logs = StepLogs(loss=loss, tokens=tokens, grad_norm=norm)
      for hook in loop:
        hook.after_update(self, step, logs)
    self.check_finite()
    for hook in loop:
      hook.end(self)
    return self.step
