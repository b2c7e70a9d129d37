// CRepetitionModel: the learned repetition-phase net, built into the binary.
//
// The net ships as an ensemble of one or two models of the same interface whose outputs
// RepetitionPhaseNet averages. The .tflite files beside this header's target
// (repetition_phase_1.tflite, repetition_phase_2.tflite) are assembled into read-only data with
// `.incbin`, as CActionModel does with the classifier, so a posewatch binary always has the net.
// training/counter/learned/install_model.py writes those files and their fingerprints.
#ifndef POSEWATCH_CREPETITION_MODEL_H
#define POSEWATCH_CREPETITION_MODEL_H

#include <stddef.h>

/// How many models are embedded (1 or 2), averaged in this order.
int pw_embedded_repetition_phase_count(void);

/// Model `index`'s bytes (a TFLite flatbuffer; 0 ≤ index < count, else NULL); valid for the life
/// of the process.
const unsigned char *pw_embedded_repetition_phase_bytes(int index);

/// Model `index`'s size in bytes (0 for an index out of range).
size_t pw_embedded_repetition_phase_size(int index);

/// The sha256 (lowercase hex) model `index`'s file had when install_model.py installed it
/// (repetition_phase_fingerprint.h; "" for an index out of range); differs from the embedded
/// bytes' only in a stale build.
const char *pw_embedded_repetition_phase_expected_sha256(int index);

#endif
