"""t2t_keras: the Transformer of "Attention Is All You Need" for Keras 3."""

import os

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def requirements(name):
  with open(os.path.join(HERE, name), encoding="utf-8") as f:
    return [line.split("#")[0].strip() for line in f
            if line.split("#")[0].strip()]


def _version():
  """The one version: ``__version__`` in t2t_keras/__init__.py."""
  with open(os.path.join(HERE, "t2t_keras", "__init__.py"),
            encoding="utf-8") as f:
    for line in f:
      if line.startswith("__version__"):
        return line.split("=")[1].strip().strip('"')
  raise RuntimeError("no __version__ in t2t_keras/__init__.py")


NAMESPACED = {"t2t_keras.problems": "problems",
              "t2t_keras.hparams_sets": "hparams"}

COMMANDS = {
    "t2t-analyze": "t2t_keras.bin.t2t_analyze:run",
    "t2t-attention": "t2t_keras.bin.t2t_attention:run",
    "t2t-avg-all": "t2t_keras.bin.t2t_avg_all:run",
    "t2t-bleu": "t2t_keras.bin.t2t_bleu:run",
    "t2t-datagen": "t2t_keras.bin.t2t_datagen:run",
    "t2t-decoder": "t2t_keras.bin.t2t_decoder:run",
    "t2t-evalb": "t2t_keras.bin.t2t_evalb:run",
    "t2t-import": "t2t_keras.bin.t2t_import:run",
    "t2t-exporter": "t2t_keras.bin.t2t_exporter:run",
    "t2t-trainer": "t2t_keras.bin.t2t_trainer:run",
}

setup(
    name="t2t_keras",
    version=_version(),
    description="The Transformer of 'Attention Is All You Need' for Keras 3, "
                "in the tensor2tensor tradition.",
    long_description=open(os.path.join(HERE, "README.md"),
                          encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    # problems/ and hparams/ live at the top of the repository (registrations
    # only) but install inside the package, claiming no common top-level name.
    packages=find_packages(include=["t2t_keras", "t2t_keras.*"]) +
    list(NAMESPACED),
    package_dir=NAMESPACED,
    # The op registry of TF Serving 2.20 (scripts/tf_serving_ops.sh).
    # rows_product.cc: compiled on the user's machine at first use.
    package_data={"t2t_keras.export": ["tf_serving_ops.txt"],
                  "t2t_keras.kernels": ["rows_product.cc"]},
    install_requires=requirements("requirements.txt"),
    extras_require={"test": requirements("requirements-test.txt"),
                    # TensorFlow with the CUDA and cuDNN wheels, at the
                    # version requirements.txt pins.
                    "gpu": [r.replace("tensorflow", "tensorflow[and-cuda]", 1)
                            for r in requirements("requirements.txt")
                            if r.startswith("tensorflow>")],
                    "ct2": [r for r in requirements("requirements-test.txt")
                            if r.startswith("ctranslate2")]},
    entry_points={"console_scripts": [f"{name}={target}"
                                      for name, target in COMMANDS.items()]},
)
