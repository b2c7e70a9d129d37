#include "caction_model.h"

// POSEWATCH_CLASSIFIER_FILE is the absolute path of action_classifier.tflite, defined by
// Package.swift. The assembler copies the file's bytes between the two symbols. After replacing
// the model, touch this file (or clean the build) so it is assembled again.
__asm__(
    ".section .rodata.posewatch_classifier,\"a\"\n"
    ".balign 16\n"
    "pw_classifier_start:\n"
    ".incbin \"" POSEWATCH_CLASSIFIER_FILE "\"\n"
    "pw_classifier_end:\n"
    ".previous\n");

extern const unsigned char pw_classifier_start[];
extern const unsigned char pw_classifier_end[];

const unsigned char *pw_embedded_classifier_bytes(void) { return pw_classifier_start; }

size_t pw_embedded_classifier_size(void) { return (size_t)(pw_classifier_end - pw_classifier_start); }
