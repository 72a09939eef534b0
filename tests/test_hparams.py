"""HParams: types, tensor2tensor override syntax, errors, JSON."""

import pytest

from t2t_keras.hparams import HParams, HParamsError


def make():
  return HParams(hidden_size=512, layer_prepostprocess_dropout=0.1,
                 pos="timing", shared_embedding=True)


def test_parse_overrides_with_types():
  hp = make().parse("hidden_size=256,layer_prepostprocess_dropout=0.2,pos=emb")
  assert hp.hidden_size == 256 and isinstance(hp.hidden_size, int)
  assert hp.layer_prepostprocess_dropout == 0.2
  assert hp.pos == "emb"


def test_int_given_to_float_and_bools():
  hp = make().parse("layer_prepostprocess_dropout=0,shared_embedding=false")
  assert hp.layer_prepostprocess_dropout == 0.0
  assert isinstance(hp.layer_prepostprocess_dropout, float)
  assert hp.shared_embedding is False
  assert make().parse("shared_embedding=True").shared_embedding is True


def test_empty_override_is_a_no_op():
  assert make().parse("") == make()
  assert make().parse("  ") == make()


@pytest.mark.parametrize("overrides, fragment", [
    ("hiden_size=3", "unknown hparam 'hiden_size'. Did you mean: hidden_size"),
    ("hidden_size=abc", "'hidden_size' expects int, got 'abc'"),
    ("hidden_size=2.5", "'hidden_size' expects int, got '2.5'"),
    ("shared_embedding=maybe", "'shared_embedding' expects bool"),
    ("hidden_size=3,pos", "malformed part 'pos'"),
    ("hidden_size=3,,pos=emb", "empty part"),
    ("=3", "missing name"),
    ("pos=emb,pos=timing", "'pos' is set twice"),
])
def test_errors_name_the_key_or_part(overrides, fragment):
  with pytest.raises(HParamsError, match=None) as info:
    make().parse(overrides)
  assert fragment in str(info.value)


def test_failed_parse_changes_nothing():
  hp = make()
  with pytest.raises(HParamsError):
    hp.parse("hidden_size=128,pos")
  assert hp.hidden_size == 512


def test_unknown_key_lists_valid_names():
  with pytest.raises(HParamsError) as info:
    make().parse("nothing_like_it=1")
  assert "Valid names: hidden_size, layer_prepostprocess_dropout" in str(
      info.value)


def test_attribute_set_is_typed():
  hp = make()
  hp.hidden_size = 1024
  assert hp.hidden_size == 1024
  with pytest.raises(HParamsError):
    hp.hidden_size = "big"
  with pytest.raises(HParamsError):
    hp.not_there = 1


def test_json_round_trip(tmp_path):
  hp = make().parse("hidden_size=64,pos=emb")
  path = tmp_path / "hparams.json"
  hp.save(str(path))
  loaded = HParams.load(str(path))
  assert loaded == hp
  assert isinstance(loaded.layer_prepostprocess_dropout, float)
  assert HParams.from_json(hp.to_json()).values() == hp.values()


def test_unsupported_type_rejected():
  with pytest.raises(HParamsError, match="unsupported type"):
    HParams(layers=[1, 2])
