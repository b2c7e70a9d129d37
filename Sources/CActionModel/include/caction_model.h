// CActionModel: posewatch's action classifier, built into the binary.
//
// The .tflite file beside this header's target is assembled into read-only data with `.incbin`,
// so a posewatch binary always has a classifier even where none is installed (first runs,
// replay on a developer's machine). The training recipe (training/README.md) writes that file.
#ifndef POSEWATCH_CACTION_MODEL_H
#define POSEWATCH_CACTION_MODEL_H

#include <stddef.h>

/// The embedded model's bytes (a TFLite flatbuffer); valid for the life of the process.
const unsigned char *pw_embedded_classifier_bytes(void);

/// The embedded model's size in bytes.
size_t pw_embedded_classifier_size(void);

/// The sha256 (lowercase hex) the model file had when the recipe wrote it
/// (classifier_fingerprint.h); differs from the embedded bytes' only in a stale build.
const char *pw_embedded_classifier_expected_sha256(void);

#endif
