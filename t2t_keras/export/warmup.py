"""TF Serving's warm-up requests, written into each exported SavedModel.

TF Serving runs every request in ``assets.extra/tf_serving_warmup_requests``
(a TFRecord file of tensorflow-serving-api's ``PredictionLog`` protos) once
when it loads a version, before it reports the version available; the first
user request then finds each signature's graph already optimized and its
kernels built, instead of paying for it. The requests cover every signature
at one sentence, and ``serving_default`` at a batch of eight too; their
sentences are made of the vocabulary's own word pieces, so any language's
model gets requests its tokenizer spells.
"""

import os

import numpy as np

from t2t_keras.ids import EOS_ID, PAD_ID

WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")
BATCH_SIZES = (1, 8)
_WORDS = 12     # word pieces per warm-up sentence


def sentences(vocab, count, words=_WORDS):
  """``count`` strings of ``words`` word-initial pieces of ``vocab`` each
  (the most frequent first: a BPE vocabulary numbers its merges by
  frequency), each sentence starting one piece later than the last."""
  starts = [i for i, start in enumerate(vocab.word_starts())
            if start and i > EOS_ID]
  if not starts:
    starts = list(range(EOS_ID + 1, vocab.size))
  return [vocab.decode([starts[(s + w) % len(starts)] for w in range(words)])
          for s in range(count)]


def requests(vocab, target_vocab, signatures):
  """The warm-up requests for a SavedModel with ``signatures`` (names):
  a list of (signature name, {input name: numpy array})."""
  made = sentences(vocab, max(BATCH_SIZES))
  batch = {n: np.array(made[:n], dtype=object) for n in BATCH_SIZES}
  out = [("serving_default", {"inputs": batch[n]}) for n in BATCH_SIZES]
  if "decode_ids" in signatures:
    ids = [vocab.encode(s) + [EOS_ID] for s in batch[1]]
    width = max(len(row) for row in ids)
    out.append(("decode_ids", {"input_ids": np.array(
        [row + [PAD_ID] * (width - len(row)) for row in ids], np.int32)}))
  prefix = np.array([sentences(target_vocab, 1, words=1)[0]], dtype=object)
  out += [(name, {"inputs": batch[1], "prefixes": prefix})
          for name in ("prefixed", "prefixed_partial") if name in signatures]
  return out


def write(saved_model_dir, warmup_requests, model_name):
  """Writes ``warmup_requests`` (as ``requests`` returns) to the SavedModel
  in ``saved_model_dir``, each a PredictRequest for ``model_name``."""
  import tensorflow as tf
  from tensorflow_serving.apis import predict_pb2
  from tensorflow_serving.apis import prediction_log_pb2
  path = os.path.join(saved_model_dir, WARMUP_FILE)
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with tf.io.TFRecordWriter(path) as records:
    for signature, inputs in warmup_requests:
      request = predict_pb2.PredictRequest()
      request.model_spec.name = model_name
      request.model_spec.signature_name = signature
      for name, value in inputs.items():
        request.inputs[name].CopyFrom(tf.make_tensor_proto(value))
      records.write(prediction_log_pb2.PredictionLog(
          predict_log=prediction_log_pb2.PredictLog(request=request))
                    .SerializeToString())


def read(saved_model_dir):
  """The warm-up requests of a SavedModel, as ``requests`` returns them
  (strings as bytes)."""
  import tensorflow as tf
  from tensorflow_serving.apis import prediction_log_pb2
  out = []
  for record in tf.data.TFRecordDataset(
      os.path.join(saved_model_dir, WARMUP_FILE)).as_numpy_iterator():
    request = prediction_log_pb2.PredictionLog.FromString(
        record).predict_log.request
    out.append((request.model_spec.signature_name,
                {name: tf.make_ndarray(proto)
                 for name, proto in request.inputs.items()}))
  return out
