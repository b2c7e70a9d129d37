/*
 * insn_count_plugin.c: a QEMU TCG plugin (API version 1, QEMU 7.2 and later) that counts the
 * guest instructions a qemu-user program executes, per guest thread, and optionally marks the
 * running count at every call of one system call (clock_gettime by default), so that a program
 * that reads the clock between pieces of work (posewatch bench --kernels reads it after every
 * node) gets an exact instruction count for each piece.
 *
 * Counting: a callback on every executed translation block adds the block's instruction count to
 * the calling vCPU's (= guest thread's) own counter, so threads never race on a counter. A block
 * left early (a fault in the middle) would be counted whole; user-mode programs that do not take
 * signals in their hot loops never do that, and arm64_instructions.sh checks the count on a known
 * loop at N and 2N iterations and against QEMU's own tests/plugin/insn.c (per instruction).
 *
 * It also sorts instructions into classes by their disassembly (at translation, so it costs
 * nothing per execution): SIMD (a vector or FP register operand), SIMD multiplies (smull, smlal,
 * mul, mla, sdot, sqrdmulh, ... on vector registers: the Cortex-A72 issues these on one port only),
 * loads and stores. A72 port limits turn the mix into a floor on cycles (docs/performance-arm64.md).
 *
 * For the cycle model (Tests/Benchmarks/arm64/cycle_model.py) it can also keep every block's
 * machine code and how often it ran: the code is copied at translation, the count is one relaxed
 * atomic add per execution (the guest's threads may run the same block).
 *
 * Arguments (-plugin ./insn_count_plugin.so,out=FILE[,marks=FILE][,sys=113][,blocks=FILE]):
 *   out=FILE    at exit: "total N", one "thread I N" line per guest thread, and "class C N" lines
 *   marks=FILE  one line "I N" per call of syscall `sys` on thread I: that thread's count so far
 *   sys=NUM     the syscall to mark (default 113, clock_gettime on aarch64)
 *   blocks=FILE at exit: "block EXECUTIONS INSTRUCTIONS HEX" per translated block that ran (HEX: its
 *               instructions' bytes as in memory); a block translated twice has two lines
 * Written against the plugin API of QEMU 7.2 (Debian 12's): qemu_plugin_insn_data returns a pointer.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_THREADS 1024
enum { CLASS_SIMD, CLASS_SIMD_MUL, CLASS_LOAD, CLASS_STORE, CLASS_COUNT };
static const char *const class_names[CLASS_COUNT] = {"simd", "simd_mul", "load", "store"};
static uint64_t counts[MAX_THREADS];
static uint64_t class_counts[MAX_THREADS][CLASS_COUNT];

/* What one translation block holds: its instruction count and its count per class; with blocks=,
 * its code, how often it ran, and the next block translated before it. */
struct block_info {
    uint64_t insns;
    uint32_t classes[CLASS_COUNT];
    uint64_t executions;
    size_t code_size;
    uint8_t *code;
    struct block_info *next;
};
static FILE *blocks_out;
static struct block_info *translated;  /* every block, newest first (blocks= only) */
static pthread_mutex_t translated_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned overflowed;          /* vCPU indices past MAX_THREADS (never expected) */
static FILE *out;
static FILE *marks;
static int64_t marked_syscall = 113;

static void tb_exec(unsigned int vcpu, void *udata)
{
    struct block_info *block = udata;
    if (blocks_out != NULL) __atomic_fetch_add(&block->executions, 1, __ATOMIC_RELAXED);
    if (vcpu < MAX_THREADS) {
        counts[vcpu] += block->insns;
        for (int c = 0; c < CLASS_COUNT; c++) class_counts[vcpu][c] += block->classes[c];
    } else {
        overflowed = 1;
    }
}

/* A register operand of the SIMD/FP file: v0-v31 (vectors), q/d/s/h/b + digit (scalars). */
static int simd_operand(const char *operands)
{
    for (const char *t = operands; *t; t++) {
        if ((t == operands || t[-1] == ' ' || t[-1] == '{' || t[-1] == ',' || t[-1] == '[')
            && strchr("vqdshb", t[0]) != NULL && t[1] >= '0' && t[1] <= '9') {
            return 1;
        }
    }
    return 0;
}

static void classify(const char *text, uint32_t classes[CLASS_COUNT])
{
    static const char *const multiplies[] = {
        "mul", "mla", "mls", "smull", "smull2", "umull", "umull2", "smlal", "smlal2", "umlal",
        "umlal2", "smlsl", "smlsl2", "sqdmulh", "sqrdmulh", "sqdmull", "sqdmull2", "sqrdmlah",
        "sdot", "udot", "usdot", "pmul", "pmull", "pmull2", "fmul", "fmla", "fmls", NULL};
    char mnemonic[16];
    size_t n = 0;
    while (text[n] != '\0' && text[n] != ' ' && n + 1 < sizeof mnemonic) { mnemonic[n] = text[n]; n++; }
    mnemonic[n] = '\0';
    const char *operands = text + n;
    int simd = simd_operand(operands);
    if (simd) classes[CLASS_SIMD]++;
    if (simd) {
        for (int i = 0; multiplies[i] != NULL; i++) {
            if (strcmp(mnemonic, multiplies[i]) == 0) { classes[CLASS_SIMD_MUL]++; break; }
        }
    }
    if (strncmp(mnemonic, "ld", 2) == 0) classes[CLASS_LOAD]++;
    else if (strncmp(mnemonic, "st", 2) == 0) classes[CLASS_STORE]++;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    struct block_info *block = calloc(1, sizeof *block);  /* lives as long as QEMU may run the block */
    if (block == NULL) abort();
    block->insns = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < block->insns; i++) {
        char *text = qemu_plugin_insn_disas(qemu_plugin_tb_get_insn(tb, i));
        if (text != NULL) { classify(text, block->classes); free(text); }
    }
    if (blocks_out != NULL) {
        for (size_t i = 0; i < block->insns; i++) block->code_size += qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, i));
        block->code = malloc(block->code_size ? block->code_size : 1);
        if (block->code == NULL) abort();
        size_t offset = 0;
        for (size_t i = 0; i < block->insns; i++) {
            struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
            memcpy(block->code + offset, qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));
            offset += qemu_plugin_insn_size(insn);
        }
        pthread_mutex_lock(&translated_lock);
        block->next = translated;
        translated = block;
        pthread_mutex_unlock(&translated_lock);
    }
    qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, block);
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8)
{
    (void)id; (void)a1; (void)a2; (void)a3; (void)a4; (void)a5; (void)a6; (void)a7; (void)a8;
    if (num == marked_syscall && marks != NULL && vcpu < MAX_THREADS) {
        fprintf(marks, "%u %" PRIu64 "\n", vcpu, counts[vcpu]);
    }
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
    (void)id; (void)userdata;
    uint64_t total = 0;
    for (unsigned i = 0; i < MAX_THREADS; i++) total += counts[i];
    fprintf(out, "total %" PRIu64 "\n", total);
    for (unsigned i = 0; i < MAX_THREADS; i++) {
        if (counts[i] != 0) fprintf(out, "thread %u %" PRIu64 "\n", i, counts[i]);
    }
    for (int c = 0; c < CLASS_COUNT; c++) {
        uint64_t sum = 0;
        for (unsigned i = 0; i < MAX_THREADS; i++) sum += class_counts[i][c];
        fprintf(out, "class %s %" PRIu64 "\n", class_names[c], sum);
    }
    if (overflowed) fprintf(out, "overflow more than %d threads: count incomplete\n", MAX_THREADS);
    fclose(out);
    if (marks != NULL) fclose(marks);
    if (blocks_out != NULL) {
        pthread_mutex_lock(&translated_lock);
        for (const struct block_info *b = translated; b != NULL; b = b->next) {
            uint64_t executions = __atomic_load_n(&b->executions, __ATOMIC_RELAXED);
            if (executions == 0) continue;
            fprintf(blocks_out, "block %" PRIu64 " %" PRIu64 " ", executions, b->insns);
            for (size_t i = 0; i < b->code_size; i++) fprintf(blocks_out, "%02x", b->code[i]);
            fputc('\n', blocks_out);
        }
        pthread_mutex_unlock(&translated_lock);
        fclose(blocks_out);
    }
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    (void)info;
    const char *out_path = NULL, *marks_path = NULL, *blocks_path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) out_path = argv[i] + 4;
        else if (strncmp(argv[i], "marks=", 6) == 0) marks_path = argv[i] + 6;
        else if (strncmp(argv[i], "blocks=", 7) == 0) blocks_path = argv[i] + 7;
        else if (strncmp(argv[i], "sys=", 4) == 0) marked_syscall = strtoll(argv[i] + 4, NULL, 10);
        else { fprintf(stderr, "insn_count_plugin: unknown argument %s\n", argv[i]); return -1; }
    }
    if (out_path == NULL) { fprintf(stderr, "insn_count_plugin: out=FILE is required\n"); return -1; }
    out = fopen(out_path, "w");
    if (out == NULL) { perror(out_path); return -1; }
    if (marks_path != NULL) {
        marks = fopen(marks_path, "w");
        if (marks == NULL) { perror(marks_path); return -1; }
        setvbuf(marks, NULL, _IOFBF, 1 << 20);
    }
    if (blocks_path != NULL) {
        blocks_out = fopen(blocks_path, "w");
        if (blocks_out == NULL) { perror(blocks_path); return -1; }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
