// The number of repetition_phase_N.tflite files beside this file and their sha256s, written by
// training/counter/learned/install_model.py together with the models. crepetition_model.c
// includes this header so that the build system, which cannot see the `.incbin`, re-assembles the
// models whenever these fingerprints (and so the models) change; the tests compare them with the
// embedded bytes to catch a stale build.
#define POSEWATCH_REPETITION_PHASE_COUNT 2
#define POSEWATCH_REPETITION_PHASE_1_SHA256 "c41cd1644a876b2865b6cf202ee12116d898d1a8a70cfdbf72462b3d56fdcd31"
#define POSEWATCH_REPETITION_PHASE_2_SHA256 "c0a75536dcc0ab42acbf0a6f3b47ff7d44ef91aac494dd41e0087aca4912ec36"
