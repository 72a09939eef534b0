"""One self-contained HTML page to browse attention maps.

Data, script and style are inline; nothing is fetched. The reader picks the
sentence, the kind of attention, the layer and the head, and sees the
paper's two views: the matrix (queries x keys) and, as in Figures 3-5, lines
from each query token to the key tokens it attends to, darker for more
weight (hovering a token shows only its lines).
"""

import html
import json

from t2t_keras.analysis.pictures import KIND_TITLES

_STYLE = """
body { font-family: sans-serif; margin: 1em; color: #222; }
label { margin-right: 1em; }
#views { display: flex; flex-wrap: wrap; gap: 2em; margin-top: 1em; }
svg text { font-size: 12px; font-family: monospace; }
.tok { cursor: pointer; }
.tok.on { font-weight: bold; fill: #b00; }
h1 { font-size: 1.2em; }
.pair { margin: 0.3em 0; }
"""

_SCRIPT = """
"use strict";
window.addEventListener("error", function (e) {
  document.body.dataset.error = String(e.message);
});
const DATA = JSON.parse(document.getElementById("data").textContent);
const NS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

function el(tag, attrs, text) {
  const node = document.createElementNS(NS, tag);
  for (const k in attrs) node.setAttribute(k, attrs[k]);
  if (text !== undefined) node.textContent = text;
  return node;
}

function fill(select, values, labels) {
  const keep = select.value;
  select.innerHTML = "";
  values.forEach(function (v, i) {
    const option = document.createElement("option");
    option.value = v;
    option.textContent = labels ? labels[i] : v;
    select.appendChild(option);
  });
  if (values.map(String).includes(keep)) select.value = keep;
}

function current() {
  const sentence = DATA.sentences[Number($("sentence").value)];
  const kind = sentence.kinds[$("kind").value];
  const w = kind.weights[Number($("layer").value)][Number($("head").value)];
  return {sentence: sentence, kind: kind, w: w};
}

function matrix(c) {
  const cell = 16, left = 10 + 8 * Math.max(...c.kind.queries.map((t) => t.length));
  const top = 10 + 8 * Math.max(...c.kind.keys.map((t) => t.length));
  const svg = el("svg", {id: "matrix", width: left + cell * c.kind.keys.length + 10,
                         height: top + cell * c.kind.queries.length + 10});
  c.kind.keys.forEach(function (t, j) {
    const x = left + cell * j + 12;
    svg.appendChild(el("text", {x: x, y: top - 4,
                                transform: "rotate(-90 " + x + " " + (top - 4) + ")"}, t));
  });
  c.kind.queries.forEach(function (t, i) {
    svg.appendChild(el("text", {x: left - 4, y: top + cell * i + 12,
                                "text-anchor": "end"}, t));
    c.w[i].forEach(function (v, j) {
      const rect = el("rect", {x: left + cell * j, y: top + cell * i, width: cell - 1,
                               height: cell - 1, fill: "#08519c", "fill-opacity": v});
      rect.appendChild(el("title", {}, t + " -> " + c.kind.keys[j] + ": " + v.toFixed(3)));
      svg.appendChild(rect);
    });
  });
  return svg;
}

function highlight(svg, query) {
  svg.querySelectorAll("line").forEach(function (line) {
    line.style.display = query === null || line.dataset.q === String(query) ? "" : "none";
  });
  svg.querySelectorAll("text.tok").forEach(function (text) {
    text.classList.toggle("on", text.dataset.q === String(query));
  });
}

function lines(c) {
  const row = 18, gap = 220, width = 140, top = 22;
  const n = Math.max(c.kind.queries.length, c.kind.keys.length);
  const svg = el("svg", {id: "lines", width: 2 * width + gap, height: top + row * n + 20});
  svg.appendChild(el("text", {x: width - 6, y: 12, "text-anchor": "end"}, "queries"));
  svg.appendChild(el("text", {x: width + gap + 6, y: 12}, "keys"));
  c.w.forEach(function (weights, i) {
    weights.forEach(function (v, j) {
      if (v < 0.01) return;
      svg.appendChild(el("line", {x1: width, y1: top + row * i + 14, x2: width + gap,
                                  y2: top + row * j + 14, stroke: "#08519c",
                                  "stroke-opacity": v, "stroke-width": 2,
                                  "data-q": i}));
    });
  });
  c.kind.queries.forEach(function (t, i) {
    const text = el("text", {x: width - 6, y: top + row * i + 18, "text-anchor": "end",
                             class: "tok", "data-q": i}, t);
    text.addEventListener("mouseenter", function () { highlight(svg, i); });
    text.addEventListener("mouseleave", function () { highlight(svg, null); });
    svg.appendChild(text);
  });
  c.kind.keys.forEach(function (t, j) {
    svg.appendChild(el("text", {x: width + gap + 6, y: top + row * j + 18}, t));
  });
  return svg;
}

function draw() {
  const c = current();
  $("pair").textContent = "";
  [["source", c.sentence.source], ["output", c.sentence.target]].forEach(function (p) {
    const div = document.createElement("div");
    div.className = "pair";
    div.textContent = p[0] + ": " + p[1];
    $("pair").appendChild(div);
  });
  const views = $("views");
  views.innerHTML = "";
  const show = $("view").value;
  if (show !== "lines") views.appendChild(matrix(c));
  if (show !== "matrix") views.appendChild(lines(c));
  document.body.dataset.ready = "1";
}

function choices() {
  const sentence = DATA.sentences[Number($("sentence").value)];
  const kinds = Object.keys(sentence.kinds);
  fill($("kind"), kinds, kinds.map((k) => DATA.titles[k]));
  const kind = sentence.kinds[$("kind").value];
  fill($("layer"), kind.weights.map((_, i) => i), kind.weights.map((_, i) => String(i + 1)));
  fill($("head"), kind.weights[0].map((_, i) => i), kind.weights[0].map((_, i) => String(i + 1)));
  draw();
}

fill($("sentence"), DATA.sentences.map((_, i) => i),
     DATA.sentences.map((s, i) => (i + 1) + ": " + s.source.slice(0, 60)));
["sentence", "kind", "layer", "head", "view"].forEach(function (id) {
  $(id).addEventListener("change", choices);
});
choices();
"""


def page_data(all_maps, digits=4):
  """The JSON the page reads: every sentence's tokens and weights."""
  sentences = []
  for maps in all_maps:
    kinds = {}
    for kind, weights in maps.weights.items():
      queries, keys = maps.axes(kind)
      kinds[kind] = {"queries": queries, "keys": keys,
                     "weights": weights.round(digits).tolist()}
    sentences.append({"source": maps.source, "target": maps.target,
                      "kinds": kinds})
  return {"sentences": sentences, "titles": KIND_TITLES}


def render_page(all_maps, title="Attention"):
  """The HTML text of the page for a list of ``AttentionMaps``."""
  data = json.dumps(page_data(all_maps), ensure_ascii=False)
  data = data.replace("</", "<\\/")   # cannot close the script element
  return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>{_STYLE}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<div>
<label>sentence <select id="sentence"></select></label>
<label>attention <select id="kind"></select></label>
<label>layer <select id="layer"></select></label>
<label>head <select id="head"></select></label>
<label>view <select id="view"><option value="both">matrix and lines</option>
<option value="matrix">matrix</option><option value="lines">lines</option></select></label>
</div>
<div id="pair"></div>
<div id="views"></div>
<script type="application/json" id="data">{data}</script>
<script>{_SCRIPT}</script>
</body></html>
"""
