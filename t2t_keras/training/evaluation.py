"""The run's evaluation as a training hook: every ``eval_every`` updates and
at the last, dev loss, perplexity and accuracy, the problem's validation
metric when asked (dev BLEU; EVALB F1 for parsing), TensorBoard scalars, a
console line, the best checkpoint, and early stopping."""

import os
import time

import tensorflow as tf

from t2t_keras.decoding.options import decode_hparams, describe
from t2t_keras.training.dev_bleu import DevBleu
from t2t_keras.training.best import BestKeeper
from t2t_keras.training.hooks import TrainingHook


class EvaluationHook(TrainingHook):
  """Evaluates the weights ``trainer.weights_for_use()`` shows, after a
  checkpoint of them at the same step (so a resumed run never evaluates a
  step twice).

  Args:
    c: the run's ``RunConfig``.
    problem: the registered problem.
    trainer: the ``Trainer``.
    model_dir: where the eval summaries go.
    chief: whether this process writes the best checkpoint.
    dev_data: ``() -> distributed dev dataset``.
    eval_every: evaluate every this many updates (and at ``train_steps``).
    train_steps: the run's last update.
    log: where console lines go.
  """

  def __init__(self, c, problem, trainer, model_dir, chief, dev_data,
               eval_every, train_steps, log):
    self.dev_data, self.log = dev_data, log
    self.eval_every, self.train_steps = eval_every, train_steps
    self.metrics, self.evaluated_at = None, None
    use_bleu = problem.validation_bleu if c.eval_bleu is None else c.eval_bleu
    self.bleu = None
    if use_bleu:
      self.bleu = DevBleu(trainer.model, problem, c.data_dir, decode_hparams(
          c.eval_decode_overrides, dict(problem.decode_defaults,
                                        **problem.eval_decode_defaults)),
                          c.eval_bleu_lines, c.eval_metric,
                          strategy=trainer.strategy, share=self._share(trainer))
      split = self.bleu.describe_split()
      log(f"validation {self.bleu.metric.upper()}: {self.bleu.lines:,} dev "
          f"sentence(s){' decoded ' + split if split else ''}, "
          f"{describe(self.bleu.decoder.hparams)}")
    # Every worker reads the chief's record, so that all make the same
    # early-stopping decision; only the chief writes it.
    self.keeper = BestKeeper(c.output_dir, trainer.model,
                             self.bleu.metric if use_bleu else "loss",
                             higher_is_better=use_bleu,
                             patience=c.early_stopping_patience, write=chief,
                             log=log)
    if self.keeper.restarted:
      log(f"{self.keeper.directory} kept the best by dev "
          f"{self.keeper.restarted}; now by dev {self.keeper.metric}, "
          "starting over")
    self.writer = (tf.summary.create_file_writer(
        os.path.join(model_dir, "eval")) if chief else
                   tf.summary.create_noop_writer())

  @staticmethod
  def _share(trainer):
    """Each worker decodes a share of the dev lines; the gathered outputs
    are scored alike on every worker."""
    cluster = trainer.cluster
    if cluster.workers == 1:
      return None
    return (cluster.rank, cluster.workers, cluster.gather_texts)

  def after_update(self, trainer, step, logs):
    if step % self.eval_every == 0 or step == self.train_steps:
      self.evaluate(trainer)

  def begin(self, trainer, restored):
    self.first_step = trainer.step

  def end(self, trainer):
    # The step a stop left (a time limit), or a run restored at its last
    # step; not a run that stopped before applying any update, nor one a
    # signal stopped (it must go quickly; the resumed run evaluates).
    if trainer.interrupted:
      return
    if self.evaluated_at != trainer.step and (
        trainer.stop_reason is None or trainer.step > self.first_step):
      self.evaluate(trainer)

  def evaluate(self, trainer):
    with trainer.weights_for_use():
      trainer.checkpointer.save(trainer.step)
      self.metrics = self._evaluate(trainer)
    self.evaluated_at = trainer.step
    stop, said = self.early_stop(trainer)
    if stop:
      trainer.stop_reason = "early stopping"
      self.log(f"stopping early: {said}")

  def early_stop(self, trainer):
    """(whether to stop early, a line's words saying why): the chief's
    answer on every worker (a worker's own record, its folder's best.json
    or its patience, may differ from the chief's)."""
    keeper = self.keeper
    decision = [float(keeper.should_stop), keeper.stale,
                -1.0 if keeper.best is None else keeper.best,
                -1.0 if keeper.best_step is None else keeper.best_step]
    if trainer.cluster.workers > 1:
      decision = trainer.cluster.from_chief(decision)
    stop, stale, best, best_step = decision
    where = keeper.directory if keeper.write else "the chief's best/"
    return bool(stop), (
        f"{int(stale)} evaluation(s) without a better dev {keeper.metric}; "
        f"best dev {keeper.metric} {best:.4g} at step {int(best_step)} "
        f"({where})")

  def _evaluate(self, trainer):
    metrics = trainer.evaluate(self.dev_data())
    line = (f"step {trainer.step}: dev loss {metrics['loss']:.4f}  "
            f"perplexity {metrics['perplexity']:.3f}  "
            f"accuracy {metrics['accuracy']:.3f}")
    if self.bleu:
      start = time.time()
      metric = self.bleu.metric
      metrics[metric], _ = self.bleu()
      line += (f"  {metric.upper()} {metrics[metric]:.2f} ({self.bleu.lines:,} "
               f"sentences, {time.time() - start:.1f} s")
      if self.bleu.decoder.repaired:
        line += f", {self.bleu.repaired} repaired"
      line += ")"
    if trainer.cluster.workers > 1:
      # The best checkpoint and early stopping follow the chief's figures on
      # every worker (one gather), so all make the same decisions.
      names = sorted(metrics)
      metrics = dict(zip(names, map(float, trainer.cluster.from_chief(
          [metrics[n] for n in names]))))
    with self.writer.as_default(step=trainer.step):
      for name, value in metrics.items():
        tf.summary.scalar(name, value)
    if self.keeper.update(trainer.step, metrics[self.keeper.metric]):
      line += "  (best so far)"
    self.log(line)
    return metrics
