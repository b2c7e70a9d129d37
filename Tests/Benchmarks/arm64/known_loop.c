/* known_loop.c: a loop with a fixed instruction count per iteration, for checking an instruction
 * counter: counts at N and 2N iterations must differ by exactly N x (instructions per iteration). */
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    long acc = 0;
    /* The asm body is fixed: add, subs, b.ne = 3 instructions per iteration. */
    __asm__ volatile(
        "1: add %[acc], %[acc], #3\n"
        "   subs %[n], %[n], #1\n"
        "   b.ne 1b\n"
        : [acc] "+r"(acc), [n] "+r"(n) : : "cc");
    return (int)(acc & 1);
}
