#!/usr/bin/env python3
"""cycle_model.py: cycles per invoke on a Pi's core, estimated by llvm-mca from the blocks QEMU ran.

Usage: cycle_model.py BLOCKS_N BLOCKS_2N N MCPU [--coverage 0.95] [--llvm-mca llvm-mca-19]
                      [--llvm-mc llvm-mc] [--verbose]

BLOCKS_N and BLOCKS_2N are insn_count_plugin.c's `blocks=` files of one program run at N and 2N
invokes ("block EXECUTIONS INSTRUCTIONS HEX" per translated block). Per invoke, a block ran
(executions at 2N − executions at N) / N times: start-up cancels out as in the instruction counts.
Blocks are keyed by their code, so the same code at another address (a second translation, another
run's load address) is one block.

The blocks that make up `coverage` of the executed instructions, most first, are disassembled
(llvm-mc) and each goes through llvm-mca as its own code region, `-iterations=100`: its cycles per
execution are the region's total cycles / 100, the steady state of the block run back to back (a
loop body's throughput; for straight-line code run once per call, an overlap the core may not get).
Cycles per invoke = Σ executions per invoke × cycles per execution over those blocks, the rest of
the instructions counted at the same cycles per instruction. llvm-mca models the pipeline (issue
width, ports, latencies, in-order issue on the A53) and nothing else: no caches or memory
bandwidth, no branch mispredictions, no instruction fetch; MCPU picks LLVM's scheduling model
(LLVM 19: `cortex-a53` its own; `cortex-a72` the Cortex-A57 model; `neoverse-n1`, the A76's
derivative, for the A76, since LLVM's `cortex-a76` also falls back to the A57 model).

Prints one line: "cycles per invoke C  instructions per invoke I  CPI P  coverage S of B blocks
skipped K unsupported instructions" (instructions llvm-mca has no timing for or cannot take, such
as a system call: left out of their block's cycles)
(and with --verbose the top blocks). Exit status 2 when llvm-mca or llvm-mc fails.
"""
import argparse
import re
import subprocess
import sys
from collections import defaultdict

REGION = re.compile(r"^\[(\d+)\] Code Region - (b\d+)\s*$")
CYCLES = re.compile(r"^Total Cycles:\s+(\d+)")
DISASSEMBLY_CPU = "neoverse-n1"  # a superset of the Pi cores' instructions (dotprod, fp16, rcpc, lse)
PARSE_ATTRIBUTES = "+dotprod,+lse,+rcpc,+fullfp16"


def read_blocks(path):
    """{code hex: (executions, instructions)} summed over translations of the same code."""
    blocks = defaultdict(lambda: [0, 0])
    with open(path) as handle:
        for line in handle:
            fields = line.split()
            if len(fields) != 4 or fields[0] != "block":
                continue
            entry = blocks[fields[3]]
            entry[0] += int(fields[1])
            entry[1] = int(fields[2])
    return blocks


def per_invoke(blocks_n, blocks_2n, invokes):
    """[(code, executions per invoke, instructions)] of the blocks that ran more at 2N than at N."""
    rows = []
    for code, (executions, instructions) in blocks_2n.items():
        extra = executions - blocks_n.get(code, (0, 0))[0]
        if extra > 0:
            rows.append((code, extra / invokes, instructions))
    return rows


def disassemble(code, llvm_mc):
    """The block's instructions as assembly text (llvm-mc), one per line."""
    data = " ".join(f"0x{code[i:i + 2]}" for i in range(0, len(code), 2))
    result = subprocess.run([llvm_mc, "--disassemble", "-triple=aarch64", f"-mcpu={DISASSEMBLY_CPU}"],
                            input=data, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"llvm-mc failed on block {code[:32]}…: {result.stderr.strip()}")
    lines = [line.strip() for line in result.stdout.splitlines()]
    return [line for line in lines if line and not line.startswith(".")]


def cycles_per_execution(listings, mcpu, llvm_mca):
    """{block name: cycles per execution} for {name: [instructions]}, one llvm-mca run."""
    source = []
    for name, instructions in listings.items():
        source.append(f"# LLVM-MCA-BEGIN {name}")
        source.extend(instructions)
        source.append("# LLVM-MCA-END")
    # Every Pi core's instructions parse (the attributes); what a model has no timing for, or an
    # instruction llvm-mca cannot take (a system call, an exclusive load), is skipped and counted.
    result = subprocess.run([llvm_mca, "-mtriple=aarch64", f"-mcpu={mcpu}", f"-mattr={PARSE_ATTRIBUTES}",
                             "-iterations=100", "-skip-unsupported-instructions=any", "-", "-o", "-"],
                            input="\n".join(source) + "\n", capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"llvm-mca -mcpu={mcpu} failed: {result.stderr.strip()[:400]}")
    cycles, region = {}, None
    for line in result.stdout.splitlines():
        match = REGION.match(line)
        if match:
            region = match.group(2)
            continue
        match = CYCLES.match(line)
        if match and region is not None:
            cycles[region] = int(match.group(1)) / 100
            region = None
    skipped = result.stderr.count("found an unsupported instruction")
    return cycles, skipped


def estimate(blocks_n, blocks_2n, invokes, mcpu, coverage=0.95, llvm_mca="llvm-mca-19", llvm_mc="llvm-mc",
             verbose=False):
    rows = per_invoke(read_blocks(blocks_n), read_blocks(blocks_2n), invokes)
    rows.sort(key=lambda row: -row[1] * row[2])
    total = sum(executions * instructions for _, executions, instructions in rows)
    chosen, covered = [], 0.0
    for row in rows:
        if covered >= coverage * total:
            break
        chosen.append(row)
        covered += row[1] * row[2]
    listings = {f"b{i}": disassemble(code, llvm_mc) for i, (code, _, _) in enumerate(chosen)}
    cycles, skipped = cycles_per_execution(listings, mcpu, llvm_mca)
    missing = [name for name in listings if name not in cycles]
    if missing:
        raise RuntimeError(f"llvm-mca gave no cycles for {len(missing)} blocks (first: {missing[0]})")
    chosen_cycles = sum(executions * cycles[f"b{i}"] for i, (_, executions, _) in enumerate(chosen))
    cpi = chosen_cycles / covered
    if verbose:
        for i, (code, executions, instructions) in enumerate(chosen[:12]):
            print(f"  b{i}: {executions:12.0f} executions/invoke × {instructions} instructions, "
                  f"{cycles[f'b{i}']:.2f} cycles each ({cycles[f'b{i}'] / instructions:.2f} CPI): "
                  f"{listings[f'b{i}'][0]} …")
    return {"cycles": cpi * total, "instructions": total, "cpi": cpi, "coverage": covered / total,
            "blocks": len(chosen), "skipped": skipped}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("blocks_n")
    parser.add_argument("blocks_2n")
    parser.add_argument("invokes", type=int)
    parser.add_argument("mcpu")
    parser.add_argument("--coverage", type=float, default=0.95)
    parser.add_argument("--llvm-mca", default="llvm-mca-19")
    parser.add_argument("--llvm-mc", default="/usr/lib/llvm-19/bin/llvm-mc")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    try:
        r = estimate(args.blocks_n, args.blocks_2n, args.invokes, args.mcpu, args.coverage, args.llvm_mca,
                     args.llvm_mc, args.verbose)
    except (RuntimeError, OSError) as error:
        print(f"cycle_model: {error}", file=sys.stderr)
        sys.exit(2)
    print(f"cycles per invoke {r['cycles']:.0f}  instructions per invoke {r['instructions']:.0f}  "
          f"CPI {r['cpi']:.3f}  coverage {r['coverage']:.3f} of {r['blocks']} blocks  "
          f"skipped {r['skipped']} unsupported instructions")


if __name__ == "__main__":
    main()
