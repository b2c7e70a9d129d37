// The sha256 of action_classifier.tflite beside this file, written by training/train.py together
// with the model. caction_model.c includes this header so that the build system, which cannot see
// the `.incbin`, re-assembles the model whenever this fingerprint (and so the model) changes; the
// tests and `posewatch doctor` compare it with the embedded bytes to catch a stale build.
#define POSEWATCH_CLASSIFIER_SHA256 "8934299f7f4a28386e4292f18dbc7a8ffdc616651828a3fa0ec0792d03c5449d"
