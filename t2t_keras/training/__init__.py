"""Training: the paper's optimizer and schedule, the loss, the loop."""
