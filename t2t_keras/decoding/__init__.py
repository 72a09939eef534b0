"""Decoding: registered searches (beam search, greedy search, sampling)
over the cached decoder."""

from t2t_keras.decoding.beam_search import beam_search
from t2t_keras.decoding.sampling import sample_decode
from t2t_keras.decoding.search import Search, make_search, search_function
from t2t_keras.decoding.steps import length_penalty
from t2t_keras.decoding.token_by_token import (TokenSearch, greedy_decode,
                                               token_by_token)

__all__ = ["beam_search", "sample_decode", "Search", "make_search",
           "search_function", "length_penalty", "TokenSearch",
           "greedy_decode", "token_by_token"]
