"""The paper's numbers, pinned: tensor2tensor changed transformer_base twice
without notice; here any change fails a test."""

import pytest

from t2t_keras import registry
from t2t_keras.models.config import TransformerConfig

PAPER_BASE = dict(
    num_hidden_layers=6, hidden_size=512, filter_size=2048, num_heads=8,
    layer_prepostprocess_dropout=0.1, label_smoothing=0.1,
    optimizer="adam", optimizer_adam_beta1=0.9, optimizer_adam_beta2=0.98,
    optimizer_adam_epsilon=1e-9, learning_rate_schedule="paper",
    learning_rate=1.0, learning_rate_warmup_steps=4000, norm_position="post",
    shared_embedding=True, shared_embedding_and_softmax_weights=True,
    pos="timing", train_steps=100000)


def test_transformer_base_is_the_paper():
  hp = registry.hparams("transformer_base")
  for name, value in PAPER_BASE.items():
    assert hp.get(name) == value, name
  config = TransformerConfig.from_hparams(hp)
  assert (config.key_size, config.value_size) == (64, 64)   # d_k = d_v = 64
  assert config.num_encoder_layers == config.num_decoder_layers == 6
  assert config.dropout == 0.1


def test_transformer_big_is_the_paper():
  hp = registry.hparams("transformer_big")
  expected = dict(PAPER_BASE, hidden_size=1024, filter_size=4096,
                  num_heads=16, layer_prepostprocess_dropout=0.3,
                  train_steps=300000)
  for name, value in expected.items():
    assert hp.get(name) == value, name
  config = TransformerConfig.from_hparams(hp)
  assert (config.key_size, config.value_size) == (64, 64)
  assert registry.hparams("transformer_big_enfr").get(
      "layer_prepostprocess_dropout") == 0.1


def test_transformer_parsing():
  config = TransformerConfig.from_hparams(
      registry.hparams("transformer_parsing"))
  assert config.num_encoder_layers == config.num_decoder_layers == 4
  assert config.hidden_size == 1024
  assert config.filter_size == 2048 and config.num_heads == 8
  # Linearized trees are long (measured in hparams/transformer.py).
  assert registry.hparams("transformer_parsing").max_length == 512


# Table 3: (row, N, d_model, d_ff, h, d_k, d_v, P_drop, eps_ls, pos).
TABLE3 = [
    ("a_h1", 6, 512, 2048, 1, 512, 512, 0.1, 0.1, "timing"),
    ("a_h4", 6, 512, 2048, 4, 128, 128, 0.1, 0.1, "timing"),
    ("a_h16", 6, 512, 2048, 16, 32, 32, 0.1, 0.1, "timing"),
    ("a_h32", 6, 512, 2048, 32, 16, 16, 0.1, 0.1, "timing"),
    ("b_dk16", 6, 512, 2048, 8, 16, 64, 0.1, 0.1, "timing"),
    ("b_dk32", 6, 512, 2048, 8, 32, 64, 0.1, 0.1, "timing"),
    ("c_n2", 2, 512, 2048, 8, 64, 64, 0.1, 0.1, "timing"),
    ("c_n4", 4, 512, 2048, 8, 64, 64, 0.1, 0.1, "timing"),
    ("c_n8", 8, 512, 2048, 8, 64, 64, 0.1, 0.1, "timing"),
    ("c_d256", 6, 256, 2048, 8, 32, 32, 0.1, 0.1, "timing"),
    ("c_d1024", 6, 1024, 2048, 8, 128, 128, 0.1, 0.1, "timing"),
    ("c_ff1024", 6, 512, 1024, 8, 64, 64, 0.1, 0.1, "timing"),
    ("c_ff4096", 6, 512, 4096, 8, 64, 64, 0.1, 0.1, "timing"),
    ("d_drop0", 6, 512, 2048, 8, 64, 64, 0.0, 0.1, "timing"),
    ("d_drop02", 6, 512, 2048, 8, 64, 64, 0.2, 0.1, "timing"),
    ("d_ls0", 6, 512, 2048, 8, 64, 64, 0.1, 0.0, "timing"),
    ("d_ls02", 6, 512, 2048, 8, 64, 64, 0.1, 0.2, "timing"),
    ("e_pos_emb", 6, 512, 2048, 8, 64, 64, 0.1, 0.1, "emb"),
]


@pytest.mark.parametrize("row", TABLE3, ids=[r[0] for r in TABLE3])
def test_table3_rows(row):
  name, n, d_model, d_ff, h, d_k, d_v, p_drop, eps_ls, pos = row
  hp = registry.hparams(f"transformer_table3_{name}")
  c = TransformerConfig.from_hparams(hp)
  assert (c.num_encoder_layers, c.num_decoder_layers) == (n, n)
  assert (c.hidden_size, c.filter_size, c.num_heads) == (d_model, d_ff, h)
  assert (c.key_size, c.value_size) == (d_k, d_v)
  assert (c.dropout, hp.label_smoothing, c.pos) == (p_drop, eps_ls, pos)
