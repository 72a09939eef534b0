"""Dropout (section 5.4 of the paper): in training each element is zeroed
with probability ``rate`` and the rest scaled by 1 / (1 - rate).

Under a tf.distribute strategy with several replicas, each replica folds
its global replica id (which counts the workers' replicas in turn) into the
seed its layer's seed generator gives, so replicas drop different elements;
the generator itself advances alike everywhere and is checkpointed, so a
resumed run draws the masks an unbroken one would. With one replica the
seed is the generator's, as in Keras.
"""

import keras

from t2t_keras import kernels
from t2t_keras.kernels import dropout as dropout_kernel


def replica_seed(seed):
  """``seed`` (int [2], a seed generator's draw) folded with this replica's
  global id under a tf.distribute strategy of several replicas; else
  ``seed`` itself. int64 [2]."""
  if keras.backend.backend() != "tensorflow":
    return seed
  import tensorflow as tf
  context = tf.distribute.get_replica_context()
  if context is None or context.num_replicas_in_sync == 1:
    return seed
  replica = tf.cast(context.replica_id_in_sync_group, tf.int32)
  return tf.random.experimental.stateless_fold_in(
      tf.cast(seed, tf.int64), replica)


@keras.saving.register_keras_serializable(package="t2t_keras")
class Dropout(keras.layers.Dropout):
  """``keras.layers.Dropout``; same arguments. Where ``kernels.enabled()``
  the masks come from ``kernels.dropout`` (16 random bits an element); else
  Keras's own mask (``tf.nn.experimental.stateless_dropout`` on
  TensorFlow), from the replica's seed (``replica_seed``).

  Call args:
    inputs: [..., d].
    training: drop only when True.
  Returns:
    ``inputs`` with dropped elements zeroed and the rest scaled.
  """

  def call(self, inputs, training=False):
    if not training or self.rate == 0:
      return inputs
    if kernels.enabled() and dropout_kernel.fits(self, inputs):
      return dropout_kernel.dropout(
          self, inputs, replica_seed(self.seed_generator.next()))
    if keras.backend.backend() != "tensorflow":
      return super().call(inputs, training=training)
    return self._plain_tf(inputs)

  def _plain_tf(self, inputs):
    """What ``keras.random.dropout`` does on TensorFlow, from the replica's
    seed: the same mask as Keras's with one replica."""
    import tensorflow as tf
    if self.rate >= 1.0:
      return tf.zeros_like(inputs)
    seed = tf.cast(tf.math.floormod(replica_seed(self.seed_generator.next()),
                                    tf.int32.max - 1), tf.int32)
    noise_shape = tf.shape(inputs)
    if self.noise_shape is not None:
      noise_shape = [noise_shape[i] if d is None else d
                     for i, d in enumerate(self.noise_shape)]
    return tf.nn.experimental.stateless_dropout(
        inputs, rate=self.rate, noise_shape=noise_shape, seed=seed)
