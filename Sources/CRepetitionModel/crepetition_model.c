#include "crepetition_model.h"
#include "repetition_phase_fingerprint.h"

// POSEWATCH_REPETITION_PHASE_FILE_1 and _2 are the absolute paths of repetition_phase_1.tflite and
// repetition_phase_2.tflite, defined by Package.swift; repetition_phase_fingerprint.h says how many
// are installed (POSEWATCH_REPETITION_PHASE_COUNT, 1 or 2). The assembler copies each file's bytes
// between two symbols. The build system does not know about that dependency; it does know about
// repetition_phase_fingerprint.h, which training/counter/learned/install_model.py rewrites with
// every installation, so this file is assembled again when a model changes.
//
// The symbols are global but hidden, on both sides, for the reason CActionModel's are: with
// assembler-local labels, aarch64 reached them through GOT entries for the section symbol with
// different addends, the linker dropped the addends and the size came out as 0. Hidden globals are
// reached PC-relative (adrp/add, lea). The names differ from the classifier's: both objects are
// linked into one binary.
#define PW_EMBED_MODEL(name, file)                         \
    __asm__(".section .rodata.posewatch_" #name ",\"a\"\n" \
            ".balign 16\n"                                 \
            ".globl " #name "_start\n"                     \
            ".hidden " #name "_start\n"                    \
            ".globl " #name "_end\n"                       \
            ".hidden " #name "_end\n"                      \
            #name "_start:\n"                              \
            ".incbin \"" file "\"\n"                       \
            #name "_end:\n"                                \
            ".previous\n");                                \
    extern const unsigned char name##_start[] __attribute__((visibility("hidden"))); \
    extern const unsigned char name##_end[] __attribute__((visibility("hidden")));

#if POSEWATCH_REPETITION_PHASE_COUNT < 1 || POSEWATCH_REPETITION_PHASE_COUNT > 2
#error "repetition_phase_fingerprint.h: POSEWATCH_REPETITION_PHASE_COUNT must be 1 or 2 (install_model.py writes it)"
#endif

PW_EMBED_MODEL(pw_repetition_phase_1, POSEWATCH_REPETITION_PHASE_FILE_1)
#if POSEWATCH_REPETITION_PHASE_COUNT >= 2
PW_EMBED_MODEL(pw_repetition_phase_2, POSEWATCH_REPETITION_PHASE_FILE_2)
#endif

int pw_embedded_repetition_phase_count(void) { return POSEWATCH_REPETITION_PHASE_COUNT; }

const unsigned char *pw_embedded_repetition_phase_bytes(int index) {
#if POSEWATCH_REPETITION_PHASE_COUNT >= 2
    if (index == 1) return pw_repetition_phase_2_start;
#endif
    return index == 0 ? pw_repetition_phase_1_start : 0;
}

size_t pw_embedded_repetition_phase_size(int index) {
#if POSEWATCH_REPETITION_PHASE_COUNT >= 2
    if (index == 1) return (size_t)(pw_repetition_phase_2_end - pw_repetition_phase_2_start);
#endif
    return index == 0 ? (size_t)(pw_repetition_phase_1_end - pw_repetition_phase_1_start) : 0;
}

const char *pw_embedded_repetition_phase_expected_sha256(int index) {
#if POSEWATCH_REPETITION_PHASE_COUNT >= 2
    if (index == 1) return POSEWATCH_REPETITION_PHASE_2_SHA256;
#endif
    return index == 0 ? POSEWATCH_REPETITION_PHASE_1_SHA256 : "";
}
