// Actions: the time-aligned pose window, the action classifier wrapper (labels, frame rate and
// window shape from the model's metadata), predictions with no-person and low-confidence outcomes,
// the repetition counter and the per-action summary.
