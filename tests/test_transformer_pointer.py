"""transformer_pointer's pointer: at each position of a linearized tree the
decoder is given the source position of the next word to copy. (The model
contract, cached decoding and export are checked for it with every model in
test_model_contract.py.)"""

import numpy as np
from keras import ops

import t2t_keras
from t2t_keras.models.transformer import shift_right
from t2t_keras.models.transformer_pointer import (at_positions, copied,
                                                  last_position,
                                                  pointer_positions)

# Source pieces 5 6 7 and EOS; the tree (S 5 (NP 6 7 )NP )S, brackets 20-23.
INPUTS = np.array([[5, 6, 7, 1, 0, 0]], "int32")
TARGETS = np.array([[20, 5, 21, 6, 7, 22, 23, 1]], "int32")


def test_the_pointer_rests_on_the_next_word_to_copy():
  positions = ops.convert_to_numpy(
      pointer_positions(shift_right(TARGETS), INPUTS))[0]
  np.testing.assert_array_equal(positions, [0, 0, 1, 1, 2, 3, 3, 3])
  # Wherever the target is a word, it is the source token pointed at.
  for t, token in enumerate(TARGETS[0]):
    if token in INPUTS[0] and token > 1:
      assert INPUTS[0, positions[t]] == token
  # Once every word is copied, it rests on the EOS, never on padding.
  assert INPUTS[0, positions[-1]] == 1


def test_padding_and_eos_are_never_counted_as_copies():
  ids = np.array([[0, 1, 5, 0]], "int32")
  inputs = np.array([[5, 1, 0, 0]], "int32")
  np.testing.assert_array_equal(ops.convert_to_numpy(copied(ids, inputs)),
                                [[False, False, True, False]])
  np.testing.assert_array_equal(
      ops.convert_to_numpy(last_position(np.zeros((1, 3), "int32"))), [0])


def test_at_positions_gathers_rows():
  memory = np.arange(2 * 3 * 2, dtype="float32").reshape(2, 3, 2)
  got = ops.convert_to_numpy(at_positions(memory, np.array([[2, 0],
                                                            [1, 1]])))
  np.testing.assert_array_equal(got, memory[[[0], [1]], [[2, 0], [1, 1]]])


def test_the_pointer_feeds_the_decoder():
  model = t2t_keras.build_model("transformer_pointer_tiny", vocab_size=30,
                                model="transformer_pointer")
  features = {"inputs": INPUTS, "targets": TARGETS}
  before = ops.convert_to_numpy(model(features))
  model.pointer.kernel.assign(np.zeros(model.pointer.kernel.shape))
  after = ops.convert_to_numpy(model(features))
  # Position 0 (nothing copied yet, the pointer at word 1) and every later
  # position change: the pointer's term is added to every decoder input.
  assert (np.abs(before - after).max(axis=-1) > 1e-4).all()
