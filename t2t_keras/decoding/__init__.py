"""Decoding: beam search, greedy search and sampling over the cached
decoder."""

from t2t_keras.decoding.beam_search import (beam_search, greedy_decode,
                                            length_penalty)
from t2t_keras.decoding.sampling import sample_decode
from t2t_keras.decoding.search import search_function
