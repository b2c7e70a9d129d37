// The sha256 of action_classifier.tflite beside this file, written by training/train.py together
// with the model. caction_model.c includes this header so that the build system, which cannot see
// the `.incbin`, re-assembles the model whenever this fingerprint (and so the model) changes; the
// tests and `posewatch doctor` compare it with the embedded bytes to catch a stale build.
#define POSEWATCH_CLASSIFIER_SHA256 "b91979b13a54a28eb96eaa48804a26107e71a326647a3d65a3c4105f8a0378e8"
