// The sha256 of repetition_phase.tflite beside this file, written by
// training/counter/learned/install_model.py together with the model. crepetition_model.c includes
// this header so that the build system, which cannot see the `.incbin`, re-assembles the model
// whenever this fingerprint (and so the model) changes; the tests compare it with the embedded
// bytes to catch a stale build.
#define POSEWATCH_REPETITION_PHASE_SHA256 "5740eaca969b3ac773c704e5249c5c12421dfce468031fa3b919ac0ee9a1682d"
