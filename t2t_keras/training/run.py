"""Train a registered model on a registered problem: what t2t-trainer runs."""

import contextlib
import os
import time

import keras
import tensorflow as tf

from t2t_keras.io import checkpoint_io
from t2t_keras import hparam_ranges
from t2t_keras import registry
from t2t_keras.data import pipeline
from t2t_keras.errors import Interrupted, UserError
from t2t_keras.hparams import HParams
from t2t_keras.io.logs import log_line
from t2t_keras.models.builder import model_spec, save_model_spec
from t2t_keras.data.vocab_check import train_data_digest, vocab_digest
from t2t_keras.models.precision import (choose_activation_dtype, cpu_flags,
                                        dtype_policy)
from t2t_keras.training import batch_plan
from t2t_keras.training import finetune
from t2t_keras.training.best import BEST_DIR
from t2t_keras.training.best import read_state as read_best_state
from t2t_keras.training.evaluation import EvaluationHook
from t2t_keras.training.feed import DataPosition, TrainingFeed
from t2t_keras.training.hooks import hooks_from_hparams
from t2t_keras.training.objective import objective_from_hparams
from t2t_keras.training.optimizer import describe_optimizer
# Re-exported: callers import RunConfig and CheckpointPolicy from here.
from t2t_keras.training.config import CheckpointPolicy, RunConfig  # noqa: F401
from t2t_keras.training.run_checks import (check_model_spec, check_some_fit,
                                           imported_step,
                                           report_long_examples)
from t2t_keras.io.run_lock import RunLock
from t2t_keras.training.agreement import agree_on_settings, settings
from t2t_keras.training.cluster import Cluster
from t2t_keras.training.strategy import (local_devices, make_strategy,
                                         num_workers)
from t2t_keras.training.workers import (
    PEER_ERRORS, agree_on_precision, end_in_agreement, peer_failure,
    start_from_chief, worker_dirs)
from t2t_keras.training.signals import SignalStopHook
from t2t_keras.training.time_limit import TimeLimitHook
from t2t_keras.training.trainer import Trainer
from t2t_keras.training.warm_start import plan as plan_warm_start
from t2t_keras.training.warm_start import recorded as warm_start_record
from t2t_keras.training.warm_start import warm_start


def resolve_hparams(hparams_set, overrides="", output_dir=None,
                    log=log_line, keep_saved=(), worker_gpu=None):
  """The hparams set with ``overrides`` applied, ``activation_dtype=auto``
  resolved for this machine, or to the precision the run in ``output_dir``
  trained in when it resumes one (the choice and its reason logged).

  When ``output_dir`` already holds an hparams.json from an earlier run of
  the same command, its values must agree: resuming with other hparams
  would silently train a different model. ``keep_saved``: names the run
  derived when it started (``--warm_start_schedule``'s), taken from it.
  ``worker_gpu``: the GPUs the run will use (the first N; None: all), the
  only ones ``auto`` looks at.
  """
  saved = output_dir and os.path.join(output_dir, "hparams.json")
  if hparams_set is None:     # the run's own (see ``saved_model_name``)
    hparams = HParams.load(saved).parse(overrides)
  else:
    hparams = registry.hparams(hparams_set).parse(overrides)
  hparam_ranges.check(hparams.values(), hparam_ranges.MODEL, "--hparams")
  previous = (HParams.load(saved, like=hparams)
              if saved and os.path.exists(saved) else None)
  if hparams.activation_dtype == "auto":
    if previous is not None and "activation_dtype" in previous.values():
      # A run resumes in the precision it trained in, on any machine.
      dtype = previous.activation_dtype
      why = f"the run in {output_dir} trained in it"
    else:
      gpus = [tf.config.experimental.get_device_details(gpu)
              for gpu in tf.config.list_physical_devices("GPU")[:worker_gpu]]
      dtype, why = choose_activation_dtype(cpu_flags(), gpus)
    hparams.activation_dtype = dtype
    log(f"activation_dtype=auto: {dtype}, since {why}")
  if previous is not None:
    for name in keep_saved:
      if name in previous.values():
        setattr(hparams, name, previous.get(name))
    # A name the saved file lacks is one added since that run was made: it
    # keeps its default.
    changed = sorted(k for k, v in hparams.values().items()
                     if k in previous.values() and previous.get(k) != v)
    if changed:
      raise UserError(
          f"{saved} was written with other hparams ({', '.join(changed)} "
          "differ); use a new --output_dir or the same --hparams")
  return hparams


def _training_feed(trainer, restored, make_batches, seed, run_dir, log,
                   new_order=None):
  """(the run's ``TrainingFeed``, its ``DataPosition``): one iterator for the
  whole run, over ``make_batches(input_context, seed)``. A resumed run
  continues it from the position saved with the restored step. Saved by
  another number of input pipelines (workers), the positions cannot be
  split or joined: the data starts a new order, seeded by ``seed`` and the
  step, at once; so it does where ``new_order`` says why (a state imported
  from tensor2tensor, or taken from the chief over the network, whose
  batches this pipeline never read). A checkpoint without any position
  (written before positions were kept) re-reads the batches its updates
  used, so it sees what an unbroken run would see."""
  step = trainer.step
  training_feed = TrainingFeed(trainer.strategy, make_batches, seed)
  position = DataPosition(run_dir, training_feed)
  if not restored:
    training_feed.start()
  elif position.restore(step):
    log(f"continuing the training data from its position at step "
        f"{step:,} ({position.path(step)})")
  elif new_order:
    training_feed.start(seed=seed + step)
    log(f"{restored} {new_order}: the training data starts a new order "
        f"(seed {seed} + step {step:,})")
  elif (others := position.others(step)):
    training_feed.start(seed=seed + step)
    log(f"{restored} was saved by {others[0]} input "
        f"pipeline(s) and this run has {training_feed.num_pipelines} (one a "
        f"worker): the training data starts a new order (seed {seed} + "
        f"step {step:,}) rather than re-reading what the updates used")
  else:
    skip = step * training_feed.batches_per_update(trainer.accumulation)
    log(f"{restored} has no saved data position for this input pipeline "
        f"(written before positions were kept, or by a worker that cannot "
        f"read {run_dir}): re-reading the {skip:,} batch(es) its updates "
        "used")
    training_feed.start(skip)
  return training_feed, position


def train(config, log=log_line):
  """Builds, trains (resuming from ``config.output_dir``) and evaluates on
  dev every ``config.eval_every`` steps (dev BLEU too when asked), keeping
  the best checkpoint in ``<output_dir>/best`` and stopping early after
  ``config.early_stopping_patience`` evaluations without improvement.
  Returns the last dev metrics (None when an earlier run stopped early).

  Args:
    config: a ``RunConfig``.
    log: where progress lines go.
  """
  try:
    return _train(config, log)
  except PEER_ERRORS as e:
    # Before fit (which names its step): another worker refused to start,
    # and the collectives that set the run up (precision, the chief's
    # state) found it gone.
    gone = peer_failure(e, None, config.output_dir,
                        config.worker_timeout_secs)
    if gone is None:
      raise
    raise gone from None
  except tf.errors.DataLossError:
    problem = registry.problem(config.problem)
    files = getattr(problem, "data_files", lambda _: [])(config.data_dir)
    found = pipeline.damaged_records(files)
    if not found:
      raise
    raise UserError(f"{found[0]} is damaged ({found[1]}); delete it and run "
                    "t2t-datagen again with the same flags: it rewrites the "
                    "splits whose shards are missing") from None


def _train(config, log):
  """``train`` without the naming of a damaged data shard."""
  c = config
  # The cluster first: a worker that refuses its settings after joining is
  # seen gone by the others (one line each); one that refused before would
  # leave them waiting for it to join (TensorFlow waits an hour).
  strategy = make_strategy(c.worker_gpu, c.cpu_devices, c.allow_cpu,
                           c.worker_timeout_secs)
  problem = registry.problem(c.problem).for_data(c.data_dir)
  hparams = resolve_hparams(
      c.hparams_set, c.hparams_overrides, c.output_dir, log,
      keep_saved=() if c.warm_start_schedule in ("", "restart") else
      finetune.SCHEDULE_HPARAMS, worker_gpu=c.worker_gpu)
  train_steps = c.train_steps or hparams.train_steps
  if num_workers() > 1:
    agree_on_precision(strategy, hparams, log)
  keras.utils.set_random_seed(c.seed)
  input_vocab, target_vocab = problem.vocab_sizes(c.data_dir)
  # Settings the problem cannot take are refused before anything is written.
  objective = objective_from_hparams(hparams, problem)
  # Sizes a model cannot be built with, before hparams.json is written.
  config_class = getattr(registry.model(c.model), "config_class", None)
  if config_class is not None:
    config_class.from_hparams(hparams)
  spec = model_spec(c.model, input_vocab, target_vocab, c.problem, c.flags,
                    vocab_digest(problem, c.data_dir), c.data_dir,
                    train_data_digest(problem, c.data_dir))
  spec = warm_start_record(spec, c.warm_start_from, c.warm_start_vocab,
                           c.output_dir)
  if num_workers() > 1:   # every worker trains the chief's model and data
    agree_on_settings(Cluster(strategy), settings(hparams, spec, c))
  # A warm start's source is checked before the new run writes anything.
  planned = None
  if c.warm_start_from and not (os.path.isdir(c.output_dir) and
                                checkpoint_io.newest_readable(c.output_dir)):
    planned = plan_warm_start(c.warm_start_from, spec, hparams,
                              c.warm_start_vocab, problem, c.data_dir)
    if planned.maps is not None and c.warm_start_optimizer:
      raise UserError("--warm_start_optimizer with --warm_start_vocab=map: "
                      "the optimizer's moments are per row of the old "
                      "vocabulary; a mapped start takes a fresh optimizer")
    finetune.plan(c, hparams, planned, log)
  elif not c.warm_start_from and (hparams.finetune_l2 or
                                  hparams.finetune_freeze):
    raise UserError("finetune_l2 and finetune_freeze are for fine-tuning: "
                    "give --warm_start_from (the source run)")
  # The run's own records are read before anything is written.
  read_best_state(os.path.join(c.output_dir, BEST_DIR))
  resuming = os.path.isdir(c.output_dir) and checkpoint_io.newest_readable(
      c.output_dir)
  # A pass over the data (where datagen recorded no lengths): once a run.
  train_counts = None if resuming else check_some_fit(
      problem, c.data_dir, hparams.max_length)
  chief = strategy.extended.should_checkpoint
  if chief:
    os.makedirs(c.output_dir, exist_ok=True)
  imported = imported_step(c.output_dir)   # before model.json is rewritten
  # One trainer writes a run directory (the chief of a multi-worker run).
  with RunLock(c.output_dir, log) if chief else contextlib.nullcontext():
    if chief:
      hparams.save(os.path.join(c.output_dir, "hparams.json"))
      check_model_spec(c.output_dir, spec, log)
      save_model_spec(c.output_dir, spec)
    model_dir, policy, chief_dir = worker_dirs(c.output_dir, chief,
                                               c.checkpoints)

    def build():
      net = registry.model(c.model)(hparams, input_vocab, target_vocab)
      net.build()
      return net

    hooks = hooks_from_hparams(hparams) + [SignalStopHook()]
    if c.train_minutes:
      hooks.append(TimeLimitHook(c.train_minutes, log))
    with dtype_policy(hparams.activation_dtype):
      trainer = Trainer(build, hparams, strategy, model_dir, policy,
                        c.jit_compile, train_steps, hooks, objective,
                        shared_dir=chief_dir)
      if num_workers() > 1:
        trainer.checkpointer.share_with(trainer.cluster)
      restored = trainer.restore(log)
      if restored:
        log(f"resumed from {restored} at step {trainer.step}" + (
            " (--warm_start_from starts new runs only)"
            if c.warm_start_from else ""))
      elif planned is not None:
        warm_start(trainer, planned, c.warm_start_optimizer)
        log(f"warm start from {planned.path}: its model weights" + (
            f" and optimizer state (step {trainer.step})"
            if c.warm_start_optimizer else ", a fresh optimizer, step 0"))
        if planned.maps is not None:
          log(planned.describe())
      new_order = ("was imported from tensor2tensor"
                   if restored and imported == trainer.step else None)
      if num_workers() > 1:
        mine = restored
        restored = start_from_chief(trainer, restored, log)
        if restored and restored != mine:
          new_order = "came from the chief over the network"
      trainer.begin(restored=bool(restored))
      log(f"training {c.model}/{c.hparams_set or '(its hparams.json)'} "
          f"on {c.problem}: "
          f"{trainer.model.count_params():,} parameters, "
          f"{strategy.num_replicas_in_sync} replica(s), "
          f"{trainer.accumulation} micro-batch(es) per update, "
          f"{hparams.activation_dtype} activations, {train_steps} steps" + (
              f" or {c.train_minutes:g} min" if c.train_minutes else "") +
          f"; {describe_optimizer(trainer.optimizer)}, learning rate "
          f"{hparams.learning_rate_schedule} (warm-up "
          f"{hparams.learning_rate_warmup_steps})")
      log(batch_plan.describe(
          local_devices(strategy), strategy.num_replicas_in_sync,
          max(1, num_workers()), hparams.batch_size, trainer.accumulation,
          hparams.activation_dtype))
      if c.jit_compile:
        shapes = len(pipeline.bucket_boundaries(hparams.max_length))
        log(f"XLA: training batches are padded to their length bucket's "
            f"bound, so the step compiles for at most {shapes} shapes (one "
            f"a bucket up to max_length={hparams.max_length}), each the "
            "first time it comes" + (
                "; each replica's forward and backward pass is compiled, "
                "the all-reduce and update are not"
                if strategy.num_replicas_in_sync > 1 else ""))
      if not restored:   # a full pass over the data: once a run, not a resume
        report_long_examples(problem, c.data_dir, hparams.max_length, log,
                             train_counts)

      # --eval_steps counts dev batches over the cluster: each worker
      # takes its share (rounded up, the same on all: each batch's figures
      # are all-reduced), so dev figures do not change with the workers.
      eval_share = -(-c.eval_steps // max(1, num_workers())) \
          if c.eval_steps else -1

      def dev_data():
        return trainer.distribute(lambda ctx: problem.batches(
            "dev", c.data_dir, hparams, input_context=ctx,
            pad_to_bounds=c.jit_compile).take(eval_share))

      eval_every = c.eval_every or train_steps
      evaluation = EvaluationHook(c, problem, trainer, model_dir, chief,
                                  dev_data, eval_every, train_steps, log)
      stopped, said = evaluation.early_stop(trainer)
      if stopped:
        log(f"stopped early before: {said}")
        return None
      train_data = trainer.feed(*_training_feed(
          trainer, restored, lambda ctx, seed: problem.batches(
              "train", c.data_dir, hparams, seed=seed, input_context=ctx,
              pad_to_bounds=c.jit_compile),
          c.seed, c.output_dir, log, new_order))
      try:
        trainer.fit(train_data, train_steps,
                    log_every=max(1, min(100, eval_every)), log=log,
                    hooks=[evaluation])
      except PEER_ERRORS as e:
        gone = peer_failure(e, trainer.step, c.output_dir,
                            c.worker_timeout_secs)
        if gone is None:
          raise
        raise gone from None
      finally:
        train_data.close()
      if num_workers() > 1 and not trainer.interrupted:
        end_in_agreement(trainer, log)
      if trainer.interrupted:
        why = (f"at step {trainer.step} with the other workers (one was "
               "stopped by a signal)" if trainer.stopped_for_peer else
               f"by {trainer.stop_reason} at step {trainer.step}")
        saved = (f"the chief saved {tf.train.latest_checkpoint(c.output_dir)}"
                 if not chief else f"saved {trainer.checkpointer.latest}")
        took = getattr(trainer, "signalled_at", None)
        took = ("" if took is None else
                f" {time.monotonic() - took:.1f} s after the signal, which "
                f"came during update {trainer.signalled_during}")
        raise Interrupted(trainer.interrupted, (
            f"stopped {why}: {saved}{took}; the same command resumes from it"
            + (" on every worker" if num_workers() > 1 else "")))
      metrics = evaluation.metrics
    return metrics
