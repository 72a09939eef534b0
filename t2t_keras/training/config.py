"""What a training run is, as frozen config objects: the one place where
each setting has its default (t2t-trainer's flags take theirs from here).

No TensorFlow here, so the command line can read the defaults cheaply.
"""

import dataclasses
from typing import Optional


@dataclasses.dataclass(frozen=True)
class CheckpointPolicy:
  """When checkpoints are written and how many are kept.

  keep: the last N are kept (the paper averages the last 5 or 20); None:
    all of them.
  every_secs: save every this many seconds (the paper: 10 minutes); None
    or 0: never by time.
  every_steps: save every this many updates as well; None: never by steps.
  """
  keep: Optional[int] = 20
  every_secs: Optional[int] = 600
  every_steps: Optional[int] = None


@dataclasses.dataclass(frozen=True)
class RunConfig:
  """One training run: what t2t-trainer's flags describe.

  problem, hparams_set, model: registered names.
  output_dir: checkpoints, hparams.json and model.json; a second run with
    the same directory resumes.
  data_dir: the problem's data (what t2t-datagen wrote).
  hparams_overrides: tensor2tensor's "a=1,b=0.2".
  train_steps: total updates; None: the hparams' train_steps.
  eval_every: evaluate on dev every this many steps; None: at the end.
  eval_steps: dev batches per evaluation; None: all of dev.
  checkpoints: a CheckpointPolicy.
  worker_gpu: GPUs (replicas) to use; 0: none (the CPU, as in
    tensor2tensor); None: all local GPUs. More than
    TensorFlow sees is an error unless ``allow_cpu``.
  allow_cpu: train on the devices TensorFlow sees when ``worker_gpu``
    asks for more.
  cpu_devices: without GPUs, split the CPU into this many logical devices.
  worker_timeout_secs: a multi-worker run ends when another worker has not
    answered TensorFlow's health checks for about this long.
  jit_compile: compile the training step with XLA.
  seed: initial weights, dropout and the data order.
  eval_bleu: decode dev and score sacreBLEU at each evaluation, and keep
    the best checkpoint by it (else by dev loss); None: the problem's
    ``validation_bleu``.
  eval_bleu_lines: dev sentences decoded for it; None: all of dev.
  eval_metric: what that decoding scores and the best checkpoint follows:
    "bleu" or "chrf" (sacreBLEU's) for translation; None: the problem's
    ``validation_metric`` (parsing: EVALB "f1").
  eval_decode_overrides: decode hparams for it ("beam_size=1,alpha=0.6");
    default: the problem's decoding settings.
  early_stopping_patience: stop after this many evaluations without a
    better dev figure; None: never.
  train_minutes: stop the updates once the run has trained this many
    minutes (counted over resumes, from each one's checkpoint; the step
    reached is checkpointed and evaluated); None: no limit.
  flags: the command line's flag values, recorded in model.json.
  warm_start_from: a run directory or checkpoint whose model weights a new
    run starts from (``training.warm_start``); None: random weights.
  warm_start_optimizer: take the source's optimizer state (and step) too.
  warm_start_vocab: "same" (the source's vocabulary, or a refusal) or
    "map" (rows carried over piece by piece to this data's vocabulary).
  warm_start_schedule: "restart" (the hparams' schedule from step 1),
    "continue" (from the source's last step) or "constant=F" (F times the
    source's last rate); see ``training.finetune``.
  """
  problem: str
  hparams_set: str
  output_dir: str
  data_dir: Optional[str] = None
  model: str = "transformer"
  hparams_overrides: str = ""
  train_steps: Optional[int] = None
  eval_every: Optional[int] = None
  eval_steps: Optional[int] = None
  checkpoints: CheckpointPolicy = CheckpointPolicy()
  worker_gpu: Optional[int] = None
  allow_cpu: bool = False
  cpu_devices: Optional[int] = None
  worker_timeout_secs: float = 30.0
  jit_compile: bool = False
  seed: int = 1234
  eval_bleu: Optional[bool] = None
  eval_bleu_lines: Optional[int] = None
  eval_metric: Optional[str] = None
  eval_decode_overrides: str = ""
  early_stopping_patience: Optional[int] = None
  train_minutes: Optional[float] = None
  flags: dict = dataclasses.field(default_factory=dict)
  warm_start_from: Optional[str] = None
  warm_start_optimizer: bool = False
  warm_start_vocab: str = "same"
  warm_start_schedule: str = "restart"
