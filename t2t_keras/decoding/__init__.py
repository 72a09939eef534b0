"""Decoding, in three rooms:

    searches/  how outputs are chosen: ``search.Search``, registered by
               name (beam, greedy, sample), the loop multi-hypothesis
               searches share, length limits, constraints
    backends/  where the model runs and how a batch of ids reaches it:
               the TensorFlow graph and XLA, JAX, a SavedModel,
               CTranslate2
    jobs/      scoring given outputs, alignments

and, here, the decode job itself: options (the decode hparams), run (lines
in, lines out), batching, stream and splits (a data split as text). Validation BLEU lives with training
(``training.dev_bleu``)."""

from t2t_keras.decoding.searches.beam_search import beam_search
from t2t_keras.decoding.searches.sampling import sample_decode
from t2t_keras.decoding.searches.search import (Search, make_search,
                                                search_function)
from t2t_keras.decoding.searches.steps import length_penalty
from t2t_keras.decoding.searches.token_by_token import (TokenSearch,
                                                        greedy_decode,
                                                        token_by_token)

__all__ = ["beam_search", "sample_decode", "Search", "make_search",
           "search_function", "length_penalty", "TokenSearch",
           "greedy_decode", "token_by_token"]
