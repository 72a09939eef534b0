"""What the encoder and decoder layers share: self-attention and the
feed-forward network, each behind a residual connection (section 3.1)."""

from t2t_keras.layers.feed_forward import PositionwiseFeedForward
from t2t_keras.layers.multi_head_attention import MultiHeadAttention
from t2t_keras.layers.residual import ResidualBlock
from t2t_keras.layers.spec import make_layer


class TransformerBlock(ResidualBlock):
  """Base of EncoderLayer and DecoderLayer.

  Args:
    num_sublayers: 2 (encoder) or 3 (decoder).
    num_heads, key_size, value_size: h, d_k, d_v.
    filter_size: d_ff.
    dropout: P_drop on each sub-layer output.
    attention_dropout, relu_dropout: dropout inside the sub-layers.
    norm_position: "post" (the paper) or "pre".
    self_attention, feed_forward: layer specs (``layers.spec``) of the
      sub-layers; None: ``MultiHeadAttention``, ``PositionwiseFeedForward``.
      An attention class takes (h, d_k, d_v, dropout=...), a feed-forward
      class (d_ff, relu_dropout=...), plus the spec's config.
  """

  def __init__(self, num_sublayers, num_heads, key_size, value_size,
               filter_size, dropout=0.1, attention_dropout=0.0,
               relu_dropout=0.0, norm_position="post", self_attention=None,
               feed_forward=None, **kwargs):
    super().__init__(num_sublayers, dropout, norm_position, **kwargs)
    self.num_heads, self.key_size, self.value_size = (num_heads, key_size,
                                                      value_size)
    self.filter_size = filter_size
    self.attention_dropout = attention_dropout
    self.relu_dropout = relu_dropout
    self.specs = {"self_attention": self_attention,
                  "feed_forward": feed_forward}
    self.self_attention = self.attention("self_attention", self_attention)
    self.feed_forward = make_layer(
        feed_forward, PositionwiseFeedForward, filter_size,
        relu_dropout=relu_dropout, dtype=self.dtype_policy,
        name="feed_forward")

  def attention(self, name, spec=None):
    """A new attention sub-layer with this block's sizes, of the class in
    ``spec`` (default: the paper's multi-head attention)."""
    return make_layer(spec, MultiHeadAttention, self.num_heads,
                      self.key_size, self.value_size,
                      dropout=self.attention_dropout,
                      dtype=self.dtype_policy, name=name)

  def get_config(self):
    config = super().get_config()
    config.update(num_heads=self.num_heads, key_size=self.key_size,
                  value_size=self.value_size, filter_size=self.filter_size,
                  dropout=self.dropout,
                  attention_dropout=self.attention_dropout,
                  relu_dropout=self.relu_dropout,
                  norm_position=self.norm_position, **self.specs)
    return config
