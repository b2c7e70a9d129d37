#include "crepetition_model.h"
#include "repetition_phase_fingerprint.h"

// POSEWATCH_REPETITION_PHASE_FILE is the absolute path of repetition_phase.tflite, defined by
// Package.swift. The assembler copies the file's bytes between the two symbols. The build system
// does not know about that dependency; it does know about repetition_phase_fingerprint.h, which
// training/counter/learned/install_model.py rewrites with every model, so this file is assembled
// again when it changes.
//
// The symbols are global but hidden, on both sides, for the reason CActionModel's are: with
// assembler-local labels, aarch64 reached them through GOT entries for the section symbol with
// different addends, the linker dropped the addends and the size came out as 0. Hidden globals are
// reached PC-relative (adrp/add, lea). The names differ from the classifier's: both objects are
// linked into one binary.
__asm__(
    ".section .rodata.posewatch_repetition_phase,\"a\"\n"
    ".balign 16\n"
    ".globl pw_repetition_phase_start\n"
    ".hidden pw_repetition_phase_start\n"
    ".globl pw_repetition_phase_end\n"
    ".hidden pw_repetition_phase_end\n"
    "pw_repetition_phase_start:\n"
    ".incbin \"" POSEWATCH_REPETITION_PHASE_FILE "\"\n"
    "pw_repetition_phase_end:\n"
    ".previous\n");

extern const unsigned char pw_repetition_phase_start[] __attribute__((visibility("hidden")));
extern const unsigned char pw_repetition_phase_end[] __attribute__((visibility("hidden")));

const unsigned char *pw_embedded_repetition_phase_bytes(void) { return pw_repetition_phase_start; }

size_t pw_embedded_repetition_phase_size(void) {
    return (size_t)(pw_repetition_phase_end - pw_repetition_phase_start);
}

const char *pw_embedded_repetition_phase_expected_sha256(void) { return POSEWATCH_REPETITION_PHASE_SHA256; }
