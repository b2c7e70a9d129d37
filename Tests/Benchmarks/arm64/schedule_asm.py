#!/usr/bin/env python3
"""schedule_asm.py: reorders a straight-line aarch64 inline-asm block for the Pi's cores, keeping
every register and memory dependency, guided by llvm-mca's scheduling models.

Usage: schedule_asm.py BLOCK.txt OUT.txt [--iterations 3000] [--seed 1] [--llvm-mca llvm-mca-19]

BLOCK.txt holds one instruction per line as the C macro has it (operands such as %[w], %[k],
%[t0] … %[t8], %[prm] are mapped to spare x registers, %[out_offset]/%[act_min]/%[act_max] to
v29-v31, for llvm-mca only). The order of BLOCK.txt is the meaning: each instruction's reads and
writes (destination, sources, an accumulating destination such as smlal/sadalp/ssra/sqxtn2/saddw,
post-indexed base registers, memory as one resource: loads never pass a store) give the pairs that
must keep their order; any order that keeps them computes the same values.

The search is a hill climb: move one instruction up to 8 places, keep the order if it still
respects every dependency and llvm-mca's cortex-a53 cycles (100 iterations of the block, its
steady state) do not grow and the cortex-a72 (LLVM's Cortex-A57 model) cycles do not grow either.
It prints the cycles before and after; the committed blocks in Sources/CKernels (gemm_neon.c's
PW_NEON_GROUP8 and requantisation, depthwise_neon.c's NEON3X3_BLOCK_ASM) came from it. The
result is checked as every kernel is: Tests/Benchmarks/check_ckernels_arm64.sh (bit for bit
against the scalar kernels under qemu), then Tests/Benchmarks/arm64_instructions.sh for the
cycle model of the whole invoke.
"""
import argparse
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cycle_model  # noqa: E402  (its llvm-mca run: the same model the arm64 benchmark uses)

OPERANDS = {"%[prm]": "x21", "%[offset]": "x22", "%[bounds]": "x23", "%[c0]": "x24", "%[c1]": "x25",
            "%[k]": "x10", "%[out]": "x20", "%[w]": "x8", "%[x0]": "x0", "%[x1]": "x1",
            "%[out_offset]": "v29", "%[act_min]": "v30", "%[act_max]": "v31"}
OPERANDS.update({f"%[t{i}]": f"x{11 + i}" for i in range(9)})
# Instructions whose destination is also read (accumulate, insert, narrow into the upper half).
READS_DESTINATION = ("smlal", "smlal2", "sadalp", "ssra", "sqxtn2", "saddw", "saddw2", "sdot", "ins", "mla")


def registers(text):
    """Architectural registers named in an operand (q/d/s/b name the v register, w the x one)."""
    names = set()
    for r in re.findall(r"\b([vxwqdsb]\d+)\b", text):
        names.add(("v" if r[0] in "vqdsb" else "x") + r[1:])
    return names


def parse(line):
    """(llvm-mca text, reads, writes) of one instruction."""
    text = line
    for operand, register in OPERANDS.items():
        text = text.replace(operand, register)
    match = re.match(r"\s*(\S+)\s+(.*)", text)
    if not match:
        raise SystemExit(f"schedule_asm: cannot read '{line}'")
    mnemonic, operands = match.group(1), match.group(2)
    reads, writes = set(), set()
    if mnemonic.startswith(("ld", "st")):
        listed = re.match(r"\{([^}]*)\}|([^,]+)", operands)
        data = registers(listed.group(1) or listed.group(2))
        address = operands[operands.index("["):]
        base = registers(address)
        reads |= base
        if "]," in address or "]!" in address:
            writes |= base
        if mnemonic.startswith("ld"):
            writes |= data
            reads.add("memory-read")
        else:
            reads |= data
            writes.add("memory")
    else:
        parts = [p.strip() for p in operands.split(",")]
        destination = registers(parts[0])
        writes |= destination
        for part in parts[1:]:
            reads |= registers(part)
        if mnemonic.startswith(READS_DESTINATION):
            reads |= destination
    return text.strip(), reads, writes


def dependencies(instructions):
    """For each instruction, the earlier ones it must stay after (RAW, WAR, WAW, memory)."""
    before = [set() for _ in instructions]
    for j, (_, reads_j, writes_j) in enumerate(instructions):
        for i in range(j):
            _, reads_i, writes_i = instructions[i]
            memory = ("memory" in writes_i and ("memory-read" in reads_j or "memory" in writes_j)) or \
                     ("memory-read" in reads_i and "memory" in writes_j)
            if (writes_i & reads_j) or (writes_i & writes_j) or (reads_i & writes_j) or memory:
                before[j].add(i)
    return before


def cycles(text, cpu, llvm_mca):
    """llvm-mca's cycles per pass of the block (cycle_model.py's run of it: 100 iterations)."""
    try:
        found, _ = cycle_model.cycles_per_execution({"b0": text.splitlines()}, cpu, llvm_mca)
    except RuntimeError as error:
        raise SystemExit(f"schedule_asm: {error}")
    if "b0" not in found:
        raise SystemExit("schedule_asm: llvm-mca gave no cycles for the block")
    return found["b0"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("block")
    parser.add_argument("output")
    parser.add_argument("--iterations", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--llvm-mca", default="llvm-mca-19")
    args = parser.parse_args()
    lines = [line.strip() for line in open(args.block) if line.strip()]
    instructions = [parse(line) for line in lines]
    before = dependencies(instructions)

    def valid(order):
        position = {j: i for i, j in enumerate(order)}
        return all(position[i] < position[j] for j in range(len(order)) for i in before[j])

    def text(order):
        return "\n".join(instructions[j][0] for j in order) + "\n"

    order = list(range(len(instructions)))
    a53, a72 = cycles(text(order), "cortex-a53", args.llvm_mca), cycles(text(order), "cortex-a72", args.llvm_mca)
    print(f"before: cortex-a53 {a53:.2f} cycles, cortex-a72 (A57 model) {a72:.2f} cycles per block", flush=True)
    rng = random.Random(args.seed)
    for _ in range(args.iterations):
        candidate = order[:]
        i = rng.randrange(len(candidate))
        j = min(len(candidate) - 1, max(0, i + rng.randint(-8, 8)))
        candidate.insert(j, candidate.pop(i))
        if candidate == order or not valid(candidate):
            continue
        c53 = cycles(text(candidate), "cortex-a53", args.llvm_mca)
        if c53 > a53:
            continue
        c72 = cycles(text(candidate), "cortex-a72", args.llvm_mca)
        if c72 <= a72:
            order, a53, a72 = candidate, c53, c72
    with open(args.output, "w") as handle:
        handle.write("\n".join(lines[j] for j in order) + "\n")
    print(f"after:  cortex-a53 {a53:.2f} cycles, cortex-a72 (A57 model) {a72:.2f} cycles per block -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
