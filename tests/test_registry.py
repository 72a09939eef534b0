"""The registry: names, listing, close matches, user directories."""

import textwrap

import pytest

from t2t_keras import registry
from t2t_keras.errors import UserError


def test_snake_case():
  assert registry.snake_case("TranslateEnde") == "translate_ende"
  assert registry.snake_case("CopySequence") == "copy_sequence"
  assert registry.snake_case("transformer_base") == "transformer_base"
  assert registry.snake_case("WMTTranslate") == "wmt_translate"


def test_builtins_are_listed():
  assert "transformer" in registry.list_models()
  assert {"transformer_base", "transformer_big", "transformer_tiny",
          "transformer_small", "transformer_parsing"} <= set(
              registry.list_hparams())
  assert "copy_sequence" in registry.list_problems()
  text = registry.help_string()
  assert "HParams sets:" in text and "  transformer_base" in text


@pytest.mark.parametrize("kind", ["model", "problem", "hparams"])
def test_names_read_from_source_are_the_registered_ones(kind):
  """What ``check_name`` reads from the built-in modules' source without
  importing them is what importing them registers; hparams sets register
  Table 3's rows in a loop, which the reading declines (None)."""
  declared = registry.declared_names(kind)
  if kind == "hparams":
    assert declared is None
  else:
    assert declared == set(registry.names(kind))
  registry.check_name(kind, registry.names(kind)[0])
  with pytest.raises(registry.RegistryError, match=f"unknown {kind} name"):
    registry.check_name(kind, "transformer_bse")


@pytest.mark.parametrize("lookup, kind", [
    (registry.hparams, "hparams"), (registry.model, "model"),
    (registry.problem, "problem")])
def test_unknown_names_list_close_and_known(lookup, kind):
  with pytest.raises(registry.RegistryError) as info:
    lookup("transformer_bse")
  message = str(info.value)
  assert f"unknown {kind} name 'transformer_bse'" in message
  assert f"Known {kind} names:" in message
  if kind == "hparams":
    assert "Did you mean: transformer_base" in message


def test_hparams_lookup_returns_fresh_copies():
  a = registry.hparams("transformer_base")
  a.hidden_size = 8
  assert registry.hparams("transformer_base").hidden_size == 512


def test_duplicate_name_from_elsewhere_is_an_error():
  with pytest.raises(registry.RegistryError, match="already registered"):
    @registry.register_hparams
    def transformer_base():
      return None


def test_import_usr_dir(tmp_path):
  usr = tmp_path / "my_t2t_usr"
  usr.mkdir()
  (usr / "__init__.py").write_text(textwrap.dedent("""
      from t2t_keras import registry

      @registry.register_hparams
      def my_tiny_set():
        from t2t_keras.registry import hparams
        h = hparams("transformer_tiny")
        h.hidden_size = 32
        return h
  """))
  registry.import_usr_dir(str(usr))
  assert registry.hparams("my_tiny_set").hidden_size == 32
  assert "my_tiny_set" in registry.list_hparams()


def test_import_usr_dir_needs_a_package(tmp_path):
  with pytest.raises(UserError, match="__init__.py"):
    registry.import_usr_dir(str(tmp_path))


def test_usr_dir_named_like_a_standard_module_is_the_users(tmp_path):
  """A folder called ``code`` (a standard module, already imported here)
  is imported from its path, with its relative imports."""
  import code  # noqa: F401
  usr = tmp_path / "code"
  usr.mkdir()
  (usr / "__init__.py").write_text("from . import sets  # noqa\n")
  (usr / "sets.py").write_text(textwrap.dedent("""
      from t2t_keras import registry

      @registry.register_hparams
      def code_dir_set():
        h = registry.hparams("transformer_tiny")
        h.hidden_size = 48
        return h
  """))
  module = registry.import_usr_dir(str(usr))
  assert module.__file__ == str(usr / "__init__.py")
  assert registry.hparams("code_dir_set").hidden_size == 48


def test_usr_dir_that_does_not_import_is_one_line(tmp_path):
  usr = tmp_path / "broken_usr"
  usr.mkdir()
  (usr / "__init__.py").write_text("from . import models  # noqa\n")
  (usr / "models.py").write_text("import nothing_by_this_name\n")
  with pytest.raises(UserError) as raised:
    registry.import_usr_dir(str(usr))
  message = str(raised.value)
  assert message.startswith(f"--t2t_usr_dir={usr} does not import: "
                            "ModuleNotFoundError: No module named "
                            "'nothing_by_this_name'"), message
  assert message.endswith(f"({usr / 'models.py'}:1)"), message
