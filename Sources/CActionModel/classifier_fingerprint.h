// The sha256 of action_classifier.tflite beside this file, written by training/train.py together
// with the model. caction_model.c includes this header so that the build system, which cannot see
// the `.incbin`, re-assembles the model whenever this fingerprint (and so the model) changes; the
// tests and `posewatch doctor` compare it with the embedded bytes to catch a stale build.
#define POSEWATCH_CLASSIFIER_SHA256 "7cff1b669efd2320cb4b8a959c75407cb33955d5543b0ad48e0706d4632dc848"
