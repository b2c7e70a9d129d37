// The sha256 of action_classifier.tflite beside this file, written by training/train.py together
// with the model. caction_model.c includes this header so that the build system, which cannot see
// the `.incbin`, re-assembles the model whenever this fingerprint (and so the model) changes; the
// tests and `posewatch doctor` compare it with the embedded bytes to catch a stale build.
#define POSEWATCH_CLASSIFIER_SHA256 "ebb68728014c7ffd83d57cf3e6b8cea17910c8f8b9cc25833d07a825d710a572"
