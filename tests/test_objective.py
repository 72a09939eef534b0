"""What training minimizes (training.objective): the paper's softmax, and
names that are not (a retired one says why, a misspelt one what there is)."""

import pytest

from t2t_keras import registry
from t2t_keras.errors import UserError
from t2t_keras.training.objective import Softmax, objective_from_hparams


def test_objectives_by_name():
  hparams = registry.hparams("transformer_tiny")
  assert isinstance(objective_from_hparams(hparams), Softmax)
  hparams.training_objective = "allowed_softmax"
  with pytest.raises(UserError, match="training_objective=allowed_softmax: "
                     ".*removed; use training_objective=softmax") as e:
    objective_from_hparams(hparams)
  assert "\n" not in str(e.value)
  hparams.training_objective = "softmaks"
  with pytest.raises(UserError, match="expected one of softmax"):
    objective_from_hparams(hparams)
