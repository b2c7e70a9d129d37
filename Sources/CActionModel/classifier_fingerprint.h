// The sha256 of action_classifier.tflite beside this file, written by training/train.py together
// with the model. caction_model.c includes this header so that the build system, which cannot see
// the `.incbin`, re-assembles the model whenever this fingerprint (and so the model) changes; the
// tests and `posewatch doctor` compare it with the embedded bytes to catch a stale build.
#define POSEWATCH_CLASSIFIER_SHA256 "8207d1b378572a9192cc847d34a4d1e1f097158104824bb58fb73a7d961b2261"
