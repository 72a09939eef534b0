"""Problems' base class, text encoders and the tf.data pipeline."""

from t2t_keras.data.problem import Problem

__all__ = ["Problem"]
