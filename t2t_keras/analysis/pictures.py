"""Attention heatmaps as PNG files, one per kind, layer and head.

Rows are queries, columns keys, both labelled with their subword pieces;
darker is more weight (0 to 1, one scale for every picture).
"""

import os

KIND_TITLES = {"encoder_self": "encoder self-attention",
               "decoder_self": "decoder self-attention",
               "encoder_decoder": "encoder-decoder attention"}


def png_name(kind, layer, head):
  """The file of 0-based ``layer`` and ``head``; its name counts from 1, as
  the titles and the page do."""
  return f"{kind}_layer{layer + 1}_head{head + 1}.png"


def write_heatmaps(maps, out_dir):
  """Writes every [layer, head] map of ``maps`` (an ``AttentionMaps``) into
  ``out_dir``; returns the file names written, in order."""
  import matplotlib
  matplotlib.use("Agg")
  from matplotlib import pyplot
  os.makedirs(out_dir, exist_ok=True)
  names = []
  for kind, weights in maps.weights.items():
    queries, keys = maps.axes(kind)
    side = 1.5 + 0.22 * max(len(queries), len(keys))
    for layer in range(weights.shape[0]):
      for head in range(weights.shape[1]):
        figure, axes = pyplot.subplots(figsize=(side + 1.2, side))
        image = axes.imshow(weights[layer, head], cmap="Blues", vmin=0.0,
                            vmax=1.0, aspect="auto", interpolation="nearest")
        axes.set_xticks(range(len(keys)), labels=keys, rotation=90,
                        fontsize=8)
        axes.set_yticks(range(len(queries)), labels=queries, fontsize=8)
        axes.set_xlabel("keys")
        axes.set_ylabel("queries")
        axes.set_title(f"{KIND_TITLES[kind]}, layer {layer + 1}, "
                       f"head {head + 1}", fontsize=9)
        figure.colorbar(image, ax=axes, fraction=0.04)
        figure.tight_layout()
        name = png_name(kind, layer, head)
        figure.savefig(os.path.join(out_dir, name), dpi=80)
        pyplot.close(figure)
        names.append(name)
  return names
