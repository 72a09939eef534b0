"""Transformer hparams sets: the paper's base and big models, every row of
Table 3, the parsing model of section 6.3, and small sets for CPU work.

Every number the paper gives is the default here; tests pin them.
"""

from t2t_keras import registry
from t2t_keras.hparams import HParams


@registry.register_hparams
def transformer_base():
  """The base model: sections 3, 5.3, 5.4 and Table 3 "base"."""
  return HParams(
      # Architecture (section 3, Table 3).
      hidden_size=512,                # d_model
      filter_size=2048,               # d_ff
      num_heads=8,                    # h
      num_hidden_layers=6,            # N
      num_encoder_layers=0,           # 0: num_hidden_layers
      num_decoder_layers=0,           # 0: num_hidden_layers
      attention_key_size=0,           # d_k per head; 0: hidden_size/num_heads
      attention_value_size=0,         # d_v per head; 0: hidden_size/num_heads
      norm_position="post",           # LayerNorm(x + Sublayer(x)), 3.1
      pos="timing",                   # sinusoids, 3.5; "emb" = learned
      max_positions=1024,             # rows of the learned table (pos=emb)
      shared_embedding=True,          # 3.4: source = target embedding
      shared_embedding_and_softmax_weights=True,  # 3.4: = pre-softmax W
      # Regularization (section 5.4).
      layer_prepostprocess_dropout=0.1,  # P_drop
      attention_dropout=0.0,          # not used by the paper's base model
      relu_dropout=0.0,               # not used by the paper's base model
      label_smoothing=0.1,            # epsilon_ls
      # What training minimizes (training/objective.py): "softmax" over the
      # vocabulary (the paper); the only one.
      training_objective="softmax",
      # Not in the paper: > 0 trains one encoder-decoder attention head to
      # look at the source token the output copies next, weighted so
      # (training/guided_alignment.py; outputs that copy their source).
      alignment_loss_weight=0.0,
      alignment_layer=-2,             # which decoder layer (-2: penultimate)
      alignment_head=0,               # which of its heads
      # Not in the paper: > 0 passes each batch twice under two dropout
      # masks and adds rdrop_alpha times a symmetric KL between the two
      # (R-Drop; training/rdrop.py). A step then costs more than one of
      # twice the batch.
      rdrop_alpha=0.0,
      # Optimizer and schedule (section 5.3).
      optimizer="adam",               # or adamw, sgd (registry: optimizer)
      optimizer_adam_beta1=0.9,
      optimizer_adam_beta2=0.98,
      optimizer_adam_epsilon=1e-9,
      optimizer_adamw_weight_decay=0.01,  # optimizer=adamw only
      learning_rate_schedule="paper",  # d_model^-0.5 * min(s^-0.5, s*w^-1.5)
      learning_rate=1.0,              # a multiplier on the schedule
      learning_rate_warmup_steps=4000,
      learning_rate_decay_steps=0,    # where *_decay factors reach 0; 0: the run's train_steps
      learning_rate_step_offset=0,    # the schedule reads step + this (--warm_start_schedule=continue)
      # Fine-tuning (training/finetune.py; not in the paper): L2 toward the
      # warm start's weights, and parts held still for some steps (0: all).
      finetune_l2=0.0,
      finetune_freeze="",             # embeddings, encoder, decoder, joined by +
      finetune_freeze_steps=0,
      # Training hooks (training/hooks.py); none in the paper.
      training_hooks="",              # registered hook names, comma-separated
      ema_decay=0.0,                  # > 0: evaluate and save an EMA of the weights
      # Training (section 5.1, 5.2) and data.
      train_steps=100000,
      gradient_accumulation_steps=1,  # micro-batches per update
      # Not in the paper: "auto" is mixed bfloat16 where the CPU has
      # bfloat16 units (as good on val here, 1.26-1.38x faster: docs/
      # training.md), else float32; "float32", "bfloat16", "float16" force.
      activation_dtype="auto",
      # float16 only: dynamic loss scaling's first scale (tensor2tensor's
      # 2^15); halved at each update whose gradients overflow, which is
      # skipped, and doubled after 2,000 good ones (Keras's rule).
      loss_scale_initial=32768.0,
      batch_size=4096,                # tokens per replica (tensor2tensor)
      max_length=256,                 # longer training examples are dropped
  )


@registry.register_hparams
def transformer_big():
  """Transformer (big), the last row of Table 3, for EN-DE."""
  hparams = transformer_base()
  hparams.hidden_size = 1024
  hparams.filter_size = 4096
  hparams.num_heads = 16
  hparams.layer_prepostprocess_dropout = 0.3
  hparams.train_steps = 300000
  return hparams


@registry.register_hparams
def transformer_big_enfr():
  """Transformer (big) for EN-FR used P_drop = 0.1 (section 6.1)."""
  hparams = transformer_big()
  hparams.layer_prepostprocess_dropout = 0.1
  return hparams


@registry.register_hparams
def transformer_parsing():
  """Section 6.3: 4 layers, d_model = 1024, all else as the base model."""
  hparams = transformer_base()
  hparams.num_hidden_layers = 4
  hparams.hidden_size = 1024
  # Not in the paper. Linearized trees are long: in subword tokens (a 16K
  # BPE vocabulary) the WSJ sample's examples have median 95, 99th
  # percentile 233 and maximum 898; CRAFT's 105, 322 and 1,677. 256 would
  # drop 0.63% of WSJ and 3.35% of CRAFT examples, 512 drops 0.03% and 0.09%.
  hparams.max_length = 512
  return hparams


@registry.register_hparams
def transformer_parsing_small():
  """parsing_wsj on the 3,669-tree WSJ sample plus CRAFT's trees
  (recipes/parsing_wsj.sh) in an hour on 2 CPU cores: ``_cpu_hour`` of
  transformer_parsing (the paper's 4 x 1024 was fit to 40K WSJ trees plus
  17M semi-supervised sentences; it would not train in an hour here). The
  step count, the precision, dropout, averaging and the norm position were
  chosen on dev F1; each departure's figures are in docs/experiments.md
  (its parsing table)."""
  # 5,500 steps, where dev F1 was still rising; recipes/parsing_wsj.sh
  # stops by the clock instead (--train_minutes=59).
  # activation_dtype stays "auto": mixed bfloat16 where the CPU has
  # bfloat16 units, level with float32 on dev at about 1.5x the speed.
  hparams = _cpu_hour(transformer_parsing(), train_steps=5500)
  # 34K trees are seen about 6 times in the hour: P_drop 0.2 rather than
  # 0.3 learns faster.
  hparams.layer_prepostprocess_dropout = 0.2
  # The moving average of the weights that led Multi30k's validation.
  hparams.ema_decay = 0.999
  # d_ff stays _cpu_hour's 1,024: 2,048 learns more a step but trains 0.71x
  # the steps in the same time, and ends behind.
  # Not the paper's post-norm: LayerNorm before each sub-layer (and after
  # each stack) learns more a step here and ends ahead.
  hparams.norm_position = "pre"
  return hparams


@registry.register_hparams
def transformer_small():
  """A small model for CPU experiments (tensor2tensor's sizes)."""
  hparams = transformer_base()
  hparams.num_hidden_layers = 2
  hparams.hidden_size = 256
  hparams.filter_size = 1024
  hparams.num_heads = 4
  return hparams


@registry.register_hparams
def transformer_tiny():
  """A tiny model for tests and quick CPU runs (tensor2tensor's sizes)."""
  hparams = transformer_base()
  hparams.num_hidden_layers = 2
  hparams.hidden_size = 128
  hparams.filter_size = 512
  hparams.num_heads = 4
  # The tests' set computes the same numbers on every CPU.
  hparams.activation_dtype = "float32"
  return hparams


def _cpu_hour(hparams, train_steps):
  """The shape of the hour-long CPU recipes, from a paper set. Each
  departure is for a small corpus and the CPU budget."""
  # 3 + 3 layers of width 256: the paper's sizes cannot be trained to
  # convergence in an hour on 2 cores, and small Transformers of this size
  # (3-4 layers, d_model 128-256) are what small-corpus papers train.
  hparams.num_hidden_layers = 3
  hparams.hidden_size = 256
  hparams.filter_size = 1024
  hparams.num_heads = 4                 # d_k = d_v = 64, as in base
  # A small corpus overfits quickly: stronger sub-layer dropout (base 0.1;
  # the small-data literature, e.g. Wu et al. 2021, uses 0.3).
  hparams.layer_prepostprocess_dropout = 0.3
  # About 100 updates an epoch at 4,096 tokens: warm up over ~10 epochs
  # rather than base's 4,000 steps, a quarter of the run or so.
  hparams.learning_rate_warmup_steps = 1000
  hparams.train_steps = train_steps
  return hparams


@registry.register_hparams
def transformer_multi30k():
  """EN->DE on Multi30k (29,000 training pairs) in an hour on 2 CPU cores:
  the set of recipes/multi30k.sh, ``_cpu_hour`` of transformer_base. Every
  departure below was chosen on val, never on a test set; what each was
  measured against is in docs/experiments.md."""
  # About 110 updates an epoch: 6,000 steps are ~55 epochs.
  hparams = _cpu_hour(transformer_base(), train_steps=6000)
  # 4 + 4 layers with a narrow feed-forward: deeper at about the step cost
  # of 3 + 3 layers with d_ff 1,024.
  hparams.num_hidden_layers = 4
  hparams.filter_size = 512
  # LayerNorm before each sub-layer (and after each stack): level with the
  # paper's post-norm at the end, ahead early, which a clock-stopped run
  # needs.
  hparams.norm_position = "pre"
  # Dropout on the attention weights and the ReLU's output too (as
  # tensor2tensor's later sets), with twice the paper's learning rate to
  # make up the slower start.
  hparams.attention_dropout = 0.1
  hparams.relu_dropout = 0.1
  hparams.learning_rate = 2.0
  # A softer target (Table 3's row (D) tries 0.2) for a small corpus.
  hparams.label_smoothing = 0.2
  # Evaluate and save an exponential moving average of the weights.
  hparams.ema_decay = 0.999
  return hparams


# The small Table 3 of recipes/table3_multi30k.py: Table 3's variations
# around the paper's model at the CPU hour's size (N 3, d_model 256, d_ff
# 1024, h 4, d_k = d_v 64, P_drop 0.3, eps_ls 0.1, post-norm, float32):
# transformer_multi30k with MULTI30K_TABLE3_BASE. Each row is (row,
# overrides) over that base and trains with the same step budget; the
# relative-position row is transformer_relative's
# transformer_relative_multi30k.
MULTI30K_TABLE3_BASE = dict(
    num_hidden_layers=3, filter_size=1024, norm_position="post",
    attention_dropout=0.0, relu_dropout=0.0, learning_rate=1.0,
    label_smoothing=0.1, ema_decay=0.0, activation_dtype="float32",
    train_steps=4000)


def multi30k_table3_base():
  """The small Table 3's base (not registered: transformer_multi30k with
  MULTI30K_TABLE3_BASE)."""
  hparams = transformer_multi30k()
  hparams.override_from_dict(MULTI30K_TABLE3_BASE)
  return hparams


MULTI30K_TABLE3 = (
    ("base",      {}),
    # (A) heads at constant compute: h * d_k = d_model.
    ("a_h1",      dict(num_heads=1, attention_key_size=256, attention_value_size=256)),
    ("a_h8",      dict(num_heads=8, attention_key_size=32, attention_value_size=32)),
    # (B) a smaller attention key size d_k, values as base.
    ("b_dk16",    dict(attention_key_size=16)),
    # (C) fewer and more layers.
    ("c_n2",      dict(num_hidden_layers=2)),
    ("c_n4",      dict(num_hidden_layers=4)),
    # (D) no regularization: P_drop 0 and eps_ls 0.
    ("d_no_reg",  dict(layer_prepostprocess_dropout=0.0, label_smoothing=0.0)),
    # (E) learned positional embeddings instead of sinusoids.
    ("e_pos_emb", dict(pos="emb")),
)  # yapf: disable


# Table 3 of the paper: each row's changes from the base model, and the
# paper's figures (dev PPL, dev BLEU, parameters in millions; None where the
# paper gives none). Each row is registered as transformer_table3_<row>.
TABLE3 = (
    # row,       overrides,                                          ppl,  bleu, params
    ("a_h1",   dict(num_heads=1, attention_key_size=512, attention_value_size=512), 5.29, 24.9, None),
    ("a_h4",   dict(num_heads=4, attention_key_size=128, attention_value_size=128), 5.00, 25.5, None),
    ("a_h16",  dict(num_heads=16, attention_key_size=32, attention_value_size=32), 4.91, 25.8, None),
    ("a_h32",  dict(num_heads=32, attention_key_size=16, attention_value_size=16), 5.01, 25.4, None),
    ("b_dk16", dict(attention_key_size=16, attention_value_size=64), 5.16, 25.1, 58),
    ("b_dk32", dict(attention_key_size=32, attention_value_size=64), 5.01, 25.4, 60),
    ("c_n2",   dict(num_hidden_layers=2), 6.11, 23.7, 36),
    ("c_n4",   dict(num_hidden_layers=4), 5.19, 25.3, 50),
    ("c_n8",   dict(num_hidden_layers=8), 4.88, 25.5, 80),
    ("c_d256", dict(hidden_size=256, attention_key_size=32, attention_value_size=32), 5.75, 24.5, 28),
    ("c_d1024", dict(hidden_size=1024, attention_key_size=128, attention_value_size=128), 4.66, 26.0, 168),
    ("c_ff1024", dict(filter_size=1024), 5.12, 25.4, 53),
    ("c_ff4096", dict(filter_size=4096), 4.75, 26.2, 90),
    ("d_drop0", dict(layer_prepostprocess_dropout=0.0), 5.77, 24.6, None),
    ("d_drop02", dict(layer_prepostprocess_dropout=0.2), 4.95, 25.5, None),
    ("d_ls0",  dict(label_smoothing=0.0), 4.67, 25.3, None),
    ("d_ls02", dict(label_smoothing=0.2), 5.47, 25.7, None),
    ("e_pos_emb", dict(pos="emb"), 4.92, 25.7, None),
)  # yapf: disable

# The paper's figures for the base and big rows of Table 3.
TABLE3_BASE = ("base", {}, 4.92, 25.8, 65)
TABLE3_BIG = ("big", {}, 4.33, 26.4, 213)


def _register_table3_row(row, overrides):
  def table3_row():
    hparams = transformer_base()
    hparams.override_from_dict(overrides)
    return hparams
  table3_row.__doc__ = f"Table 3 row ({row[0].upper()}): {overrides}."
  registry.register_hparams(f"transformer_table3_{row}")(table3_row)


for _row, _overrides, *_ in TABLE3:
  _register_table3_row(_row, _overrides)
