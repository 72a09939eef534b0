"""translate_synthetic: a generated language pair, the README's default.

The project makes all of its text (no download, no third-party text). The
source is English-like: "the big red dogs chase a small cat near these old
houses". The target language, made up here, needs attention to get right:

- reordering: the verb goes to the end (subject-object-verb), adjectives
  follow their noun;
- agreement: the verb's ending follows the number of the subject, which the
  object and a prepositional phrase may separate from it; adjectives and
  determiners agree with their noun.

Target words are fixed pseudo-words made from syllables, so the mapping is
learnable and deterministic. 40,000 training pairs, 1,000 dev, 1,000 test
(no dev or test sentence occurs in train).
"""

import random

from t2t_keras import registry
from t2t_keras.data.sources import GeneratedSource
from t2t_keras.data.text_problem import Text2TextProblem

NOUNS = ("dog", "cat", "house", "tree", "bird", "car", "river", "child",
         "teacher", "farmer", "horse", "boat", "garden", "city", "friend",
         "doctor", "apple", "letter", "window", "mountain")
ADJECTIVES = ("big", "small", "red", "old", "young", "green", "happy",
              "quiet", "fast", "tall", "dark", "kind")
VERBS = ("see", "chase", "like", "find", "help", "follow", "carry", "watch",
         "paint", "visit", "call", "hear")
PREPOSITIONS = ("near", "with", "behind", "under")
# (singular, plural) determiners of the source and their target words.
DETERMINERS = {"the": ("the", "the"), "this": ("this", "these"),
               "that": ("that", "those"), "a": ("a", "some")}
TARGET_DETERMINERS = {"the": ("da", "di"), "this": ("kem", "kemi"),
                      "that": ("tor", "tori"), "a": ("un", "sum")}
_SYLLABLES = ("ka", "lo", "mi", "ru", "sa", "te", "vo", "ni", "pe", "zu",
              "ba", "go", "fi", "ha", "je", "wu")
SPLIT_SIZES = {"train": 40_000, "dev": 1_000, "test": 1_000}
_SEEDS = {"train": 11, "dev": 12, "test": 13}


def _lexicon():
  """Source word -> target stem, fixed by a seeded generator."""
  rng = random.Random(2017)
  stems, used = {}, set()
  for word in NOUNS + ADJECTIVES + VERBS + PREPOSITIONS:
    while True:
      stem = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 3))))
      if stem not in used:
        used.add(stem)
        stems[word] = stem
        break
  return stems


LEXICON = _lexicon()


def _noun_phrase(rng):
  """Returns (source words, target words, plural?)."""
  plural = rng.random() < 0.5
  det = rng.choice(tuple(DETERMINERS))
  adjectives = rng.sample(ADJECTIVES, rng.choice((0, 0, 1, 1, 2)))
  noun = rng.choice(NOUNS)
  number = 1 if plural else 0
  source = ([DETERMINERS[det][number]] + adjectives +
            [noun + ("s" if plural else "")])
  target = ([TARGET_DETERMINERS[det][number], LEXICON[noun] +
             ("en" if plural else "")] +
            [LEXICON[a] + ("i" if plural else "a") for a in adjectives])
  return source, target, plural


def make_pair(rng):
  """One (source, target) sentence pair."""
  subject, subject_t, plural = _noun_phrase(rng)
  obj, obj_t, _ = _noun_phrase(rng)
  verb = rng.choice(VERBS)
  source = subject + [verb if plural else verb + "s"] + obj
  target = subject_t + obj_t
  if rng.random() < 0.4:
    preposition = rng.choice(PREPOSITIONS)
    phrase, phrase_t, _ = _noun_phrase(rng)
    source += [preposition] + phrase
    target += [LEXICON[preposition]] + phrase_t
  target.append(LEXICON[verb] + ("n" if plural else "t"))
  return " ".join(source), " ".join(target)


def generate(split):
  """The split's pairs; dev and test sentences never occur in train."""
  held_out = set()
  if split == "train":
    for other in ("dev", "test"):
      held_out.update(s for s, _ in generate(other))
  rng = random.Random(_SEEDS[split])
  pairs, seen = [], set()
  while len(pairs) < SPLIT_SIZES[split]:
    source, target = make_pair(rng)
    if source in held_out or (split != "train" and source in seen):
      continue
    seen.add(source)
    pairs.append((source, target))
  return pairs


@registry.register_problem
class TranslateSynthetic(Text2TextProblem):
  """The embedded default problem (see the module docstring)."""
  source_lang, target_lang = "en", "xx"
  vocab_size = 600

  def default_source(self, tmp_dir):
    del tmp_dir
    return GeneratedSource(generate, "generated synthetic sentence pairs",
                           self.source_lang, self.target_lang)


def gold_alignment(source):
  """The alignment ``make_pair`` builds for the source sentence ``source``
  (str): (source word, target word) index pairs, 0-based, one per target
  word (each target word translates one source word).

  The source is NP verb NP [preposition NP], each NP determiner
  adjective* noun; the target is NP NP [preposition NP] verb, each NP
  determiner noun adjective*.
  """
  words = source.split()
  nouns = {n for n in NOUNS} | {n + "s" for n in NOUNS}
  phrases, start = [], 0
  for i, word in enumerate(words):
    if word in nouns:
      phrases.append(list(range(start, i + 1)))
      start = i + 2       # past the verb or the preposition after the noun
  verb = phrases[0][-1] + 1
  pairs = []

  def phrase(indices):
    det, adjectives, noun = indices[0], indices[1:-1], indices[-1]
    return [det, noun] + adjectives

  order = phrase(phrases[0]) + phrase(phrases[1])
  if len(phrases) > 2:
    order += [phrases[1][-1] + 1] + phrase(phrases[2])
  order.append(verb)
  for target_index, source_index in enumerate(order):
    pairs.append((source_index, target_index))
  return pairs
