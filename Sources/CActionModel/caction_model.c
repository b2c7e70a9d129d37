#include "caction_model.h"
#include "classifier_fingerprint.h"

// POSEWATCH_CLASSIFIER_FILE is the absolute path of action_classifier.tflite, defined by
// Package.swift. The assembler copies the file's bytes between the two symbols. The build system
// does not know about that dependency; it does know about classifier_fingerprint.h, which
// training/train.py rewrites with every model, so this file is assembled again when it changes.
//
// The symbols are global but hidden, on both sides: the C code then reaches them PC-relative
// (adrp/add, lea) instead of through the GOT. With assembler-local labels, aarch64 turned both
// references into GOT entries for the section symbol with different addends, the linker dropped
// the addends, and the size came out as 0 (found by the emulated arm64 test run).
__asm__(
    ".section .rodata.posewatch_classifier,\"a\"\n"
    ".balign 16\n"
    ".globl pw_classifier_start\n"
    ".hidden pw_classifier_start\n"
    ".globl pw_classifier_end\n"
    ".hidden pw_classifier_end\n"
    "pw_classifier_start:\n"
    ".incbin \"" POSEWATCH_CLASSIFIER_FILE "\"\n"
    "pw_classifier_end:\n"
    ".previous\n");

extern const unsigned char pw_classifier_start[] __attribute__((visibility("hidden")));
extern const unsigned char pw_classifier_end[] __attribute__((visibility("hidden")));

const unsigned char *pw_embedded_classifier_bytes(void) { return pw_classifier_start; }

size_t pw_embedded_classifier_size(void) { return (size_t)(pw_classifier_end - pw_classifier_start); }

const char *pw_embedded_classifier_expected_sha256(void) { return POSEWATCH_CLASSIFIER_SHA256; }
