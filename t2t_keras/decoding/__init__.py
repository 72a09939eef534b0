"""Decoding: beam search and greedy search over the cached decoder."""

from t2t_keras.decoding.beam_search import (beam_search, greedy_decode,
                                            length_penalty, search_function)
