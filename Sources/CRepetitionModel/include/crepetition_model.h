// CRepetitionModel: the learned repetition-phase net, built into the binary.
//
// The .tflite file beside this header's target is assembled into read-only data with `.incbin`,
// as CActionModel does with the classifier, so a posewatch binary always has the net.
// training/counter/learned/install_model.py writes that file and its fingerprint.
#ifndef POSEWATCH_CREPETITION_MODEL_H
#define POSEWATCH_CREPETITION_MODEL_H

#include <stddef.h>

/// The embedded model's bytes (a TFLite flatbuffer); valid for the life of the process.
const unsigned char *pw_embedded_repetition_phase_bytes(void);

/// The embedded model's size in bytes.
size_t pw_embedded_repetition_phase_size(void);

/// The sha256 (lowercase hex) the model file had when install_model.py installed it
/// (repetition_phase_fingerprint.h); differs from the embedded bytes' only in a stale build.
const char *pw_embedded_repetition_phase_expected_sha256(void);

#endif
