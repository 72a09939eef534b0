"""HParams: types, tensor2tensor override syntax, errors, JSON."""

import pytest

from t2t_keras import registry
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


def test_auto_precision_follows_the_cpu_flags():
  from t2t_keras.models.precision import choose_activation_dtype
  table = [({"avx2", "fma"}, "float32"),
           ({"avx512f", "avx512_vnni"}, "float32"),
           ({"avx512f", "avx512_bf16"}, "bfloat16"),
           ({"amx_tile", "amx_bf16", "amx_int8"}, "bfloat16"),
           ({"avx512_bf16", "amx_bf16"}, "bfloat16"),
           (set(), "float32")]
  for flags, expected in table:
    dtype, why = choose_activation_dtype(flags)
    assert dtype == expected, (flags, why)
    assert why
  assert "avx512_bf16" in choose_activation_dtype({"avx512_bf16"})[1]
  assert "no bfloat16 units" in choose_activation_dtype({"sse2"})[1]


def _gpu(name, major, minor):
  return {"device_name": name, "compute_capability": (major, minor)}


@pytest.mark.parametrize("gpus,expected,because", [
    ([_gpu("NVIDIA H100 80GB HBM3", 9, 0)], "bfloat16",
     "compute capability 9.0 has bfloat16 tensor cores"),
    ([_gpu("NVIDIA A100-SXM4-40GB", 8, 0)] * 8, "bfloat16",
     "8 GPU(s) (NVIDIA A100-SXM4-40GB): compute capability 8.0"),
    ([_gpu("NVIDIA GeForce RTX 4090", 8, 9)], "bfloat16", "8.9"),
    ([_gpu("NVIDIA GeForce RTX 3090", 8, 6)], "bfloat16", "8.6"),
    ([_gpu("NVIDIA B200", 10, 0)], "bfloat16", "10.0"),
    ([_gpu("Tesla V100-SXM2-16GB", 7, 0)], "float16", "loss scaling"),
    ([_gpu("Tesla T4", 7, 5)], "float16", "compute capability 7.5 has "
     "float16 tensor cores, not bfloat16 ones"),
    ([_gpu("Tesla P100-PCIE-16GB", 6, 0)], "float32", "6.0 has no tensor"),
    ([_gpu("Tesla K80", 3, 7)], "float32", "3.7 has no tensor cores"),
    # The least capable GPU decides.
    ([_gpu("NVIDIA A100-SXM4-40GB", 8, 0), _gpu("Tesla V100-SXM2-16GB", 7,
                                                0)], "float16",
     "NVIDIA A100-SXM4-40GB, Tesla V100-SXM2-16GB"),
    ([{"device_name": "a GPU without details"}], "float32", "unknown"),
])
def test_auto_precision_on_gpus(gpus, expected, because):
  """activation_dtype=auto with GPUs visible: by compute capability, whatever
  the CPU has."""
  from t2t_keras.models.precision import choose_activation_dtype
  for cpu in ({"avx512_bf16"}, set()):
    dtype, why = choose_activation_dtype(cpu, gpus)
    assert dtype == expected and because in why, (gpus, why)


def test_auto_precision_resolves_before_the_run_records_it(tmp_path,
                                                          monkeypatch):
  from t2t_keras.training import run
  logged = []
  for flags, expected in (({"avx512_bf16"}, "bfloat16"), (set(), "float32")):
    monkeypatch.setattr(run, "cpu_flags", lambda f=flags: f)
    hparams = run.resolve_hparams("transformer_tiny", "activation_dtype=auto",
                                  log=logged.append)
    assert hparams.activation_dtype == expected
    assert logged[-1].startswith(f"activation_dtype=auto: {expected}, since")
  # A run recorded in bfloat16 resumes under auto on a bfloat16 CPU.
  monkeypatch.setattr(run, "cpu_flags", lambda: {"avx512_bf16"})
  run.resolve_hparams("transformer_tiny", "activation_dtype=auto").save(
      str(tmp_path / "hparams.json"))
  assert run.resolve_hparams("transformer_tiny", "activation_dtype=auto",
                             str(tmp_path), log=logged.append
                             ).activation_dtype == "bfloat16"
  # ... and on a CPU without them too: a run resumes in the precision it
  # trained in, whatever machine it resumes on.
  monkeypatch.setattr(run, "cpu_flags", set)
  assert run.resolve_hparams("transformer_tiny", "activation_dtype=auto",
                             str(tmp_path), log=logged.append
                             ).activation_dtype == "bfloat16"
  assert logged[-1] == (f"activation_dtype=auto: bfloat16, since the run in "
                        f"{tmp_path} trained in it")


def test_paper_sets_choose_precision_by_the_cpu_and_test_sets_do_not():
  """Mixed bfloat16 is the default where the CPU has bfloat16 units; the
  tests' sets pin float32."""
  for name in ("transformer_base", "transformer_big", "transformer_parsing",
               "transformer_parsing_small", "transformer_multi30k",
               "transformer_table3_c_n2", "transformer_small"):
    assert registry.hparams(name).activation_dtype == "auto", name
  for name in ("transformer_tiny", "transformer_relative_tiny",
               "transformer_rotary_tiny", "transformer_relative_multi30k"):
    assert registry.hparams(name).activation_dtype == "float32", name


def test_the_multi30k_set_is_the_recipe_s_and_the_small_table3_base_is_kept():
  """transformer_multi30k holds the values the recipe's figures were made
  with (docs/recipes.md); the small Table 3's base is the paper's model at
  the CPU hour's size, as its table was made."""
  from t2t_keras.hparams_sets.transformer import multi30k_table3_base
  recipe = registry.hparams("transformer_multi30k")
  expected = dict(num_hidden_layers=4, hidden_size=256, filter_size=512,
                  num_heads=4, norm_position="pre",
                  layer_prepostprocess_dropout=0.3, attention_dropout=0.1,
                  relu_dropout=0.1, learning_rate=2.0,
                  learning_rate_warmup_steps=1000, label_smoothing=0.2,
                  ema_decay=0.999, train_steps=6000, activation_dtype="auto")
  assert {k: getattr(recipe, k) for k in expected} == expected
  base = multi30k_table3_base()
  assert (base.num_hidden_layers, base.filter_size, base.norm_position,
          base.label_smoothing, base.ema_decay, base.learning_rate,
          base.activation_dtype, base.train_steps) == (
              3, 1024, "post", 0.1, 0.0, 1.0, "float32", 4000)
  relative = registry.hparams("transformer_relative_multi30k")
  assert relative.pos == "none" and relative.num_hidden_layers == 3
